#!/bin/sh
# Real documentation sites of many HTML generators, for ../shared/tools/falsedrop-score and
# tests/bench/coverage.py (issue 11). Each is a Debian doc package fetched with
# `apt-get download` into $CACHE/debs/PKG_*.deb and unpacked with `dpkg -x` into
# $CACHE/sites/PKG/, exactly as falsedrop-score does it, so both tools find the same files.
# Idempotent: a package already downloaded or unpacked is left as it is.
# Prints the --sites argument (PKG:HTML_ROOT,...) on stdout; progress goes to stderr.
#   sh tests/bench/sites.sh          every site below
#   sh tests/bench/sites.sh --new    only the sites added for issue 11 (not the three
#                                    falsedrop-score measures by default)
# The last eleven (new = 2) were added on 2026-11-26 as sites nothing had been tuned to; the
# Rust book's stubs led to fingerprint version 4 (docs/FINGERPRINT.md).
# The nine of new = 3 (2026-11-26, issue 11) are generators none of the others use:
# erl_docgen, odoc, two more Sphinx themes, GNUstep autogsdoc, QDoc, Doxygen 1.9.4,
# texi2html 1.78, nim doc; QDoc's member lists and Nim's link-only module pages led to two
# extractor rules (extract/boiler.c, steps 1 and 10).
#   sh tests/bench/sites.sh --table  PKG HTML_ROOT GENERATOR, one site a line
# The four of new = 4 (2026-11-27, issue 11) are generators none of the others use, added
# after fingerprint version 6 was chosen: LaTeX2HTML, fpdoc, Groovydoc, LibreOffice's help
# XSLT. Pages wrongly dropped, main (version 5) against version 6: 0 and 0 of 652, 2 and 0
# of 4,694, 1 and 0 of 1,674, 2 and 0 of 2,561.
# The ten of new = 5 (2026-11-27, issue 11, branch gen11h) are generators or layouts none
# of the others use, measured before anything was tuned to them: Doxygen's mm layout
# (glibmm, gtkmm), Doxygen + xmlto (D-Bus), Sphinx's agogo theme (Botan), makeinfo 6
# (diffutils), DocBook XSL of aptitude, Berkeley DB (1.73) and libstdc++, HAProxy's
# dconv, Ant's hand-written manual + Javadoc. Pages wrongly dropped, main at 6b45f8e and
# after the branch's two extractor rules (the same on all ten): glibmm 0 of 916, gtkmm 0
# of 795, dbus 0 of 693, botan 0 of 63, diffutils 0 of 112, aptitude 0 of 89, haproxy 0
# of 6, ant 0 of 1,526, libstdc++ 0 of 104, db5.3-doc's api_reference 6 of 1,278 (the C
# and C++ pages of one function, DB->get_flags() ~ Db::get_flags(), whose token strings
# differ in a few words, and an STL constructor ~ destructor page: docs/BENCHMARKS.md,
# "Ten more generators"). db5.3-doc's C# API (csharp/html, Sandcastle, *.htm pages that
# falsedrop-score's *.html glob does not read) led to the two rules (extract/boiler.c
# step 5: data tables; extract/walk.c: "remark").
# The eleven of new = 6 (2026-11-27, issue 11, branch gen11j) are generators or layouts
# none of the others use, measured on main (a172c4e) before anything was changed: Scribble,
# GAPDoc, Scaladoc 2.11, Sphinx's pydata and zzzeeksphinx themes, Docutils rst2html, jQuery
# UI's demos, Postfix's HTML, xfpt, SWIG's manual, grohtml. Pages wrongly dropped, main ->
# branch: 13 -> 14 of 6,851 (python-scipy-doc 6 -> 7, scala-doc 6, libjs-jquery-ui-docs 1;
# docs/BENCHMARKS.md, "Ten generators more"). Postfix's tables and definition lists and
# Scribble's signatures led to three extractor rules (extract/boiler.c step 5, walk.c).
# The eleven of new = 7 (2026-11-27, issue 11, branch gen11l) are generators or layouts none
# of the others use, measured on main (3688a15) before anything was changed: MediaWiki
# (cppreference), ikiwiki, man2html, the Haskell 98 Report's own tool, Pod::Simple::XHTML
# (mod_perl), Halibut, framed hand-written HTML (xfig), SWI-Prolog's latex2html, makeinfo 4
# (Yorick), Pike autodoc, Gri's texinfo script. Pages wrongly dropped, main -> branch:
# 17 -> 1 of 6,537 (cppreference 17 -> 1, the ten others 0 -> 0): MediaWiki's layout
# (extract/walk.c) and the marks inside a generator's area (extract/boiler.c step 1);
# docs/BENCHMARKS.md, "Generators of group 7 (gen11l)". imagemagick-6-doc was left out:
# its html/www/www is a symbolic link to ., a loop for falsedrop-score's glob.
# The ten of new = 8 (2026-11-28, issue 11, branch gen11m) are generators or layouts none
# of the others use, measured on main (1f5092a) before anything was changed: rustdoc (the
# syn crate, from cargo-doc), Sphinx's furo, sphinx_rtd_theme and classic themes, pandoc
# (Allegro 5), ocamldoc (Batteries), Tcl's doctools (tcllib), lxml's rst2html pages with
# their menu, Doxygen with Eigen's own header and menu, Hugo (Bootstrap 5's examples).
# Pages wrongly dropped, main -> branch: 3 -> 0 of 4,142 (libbatteries-ocaml-doc 1 -> 0,
# libeigen3-doc 2 -> 0): Eigen's empty Doxygen pages (extract/boiler.c step 9b) and
# ocamldoc's linked <h1> (step 8); Tcl doctools' sections and pandoc's title block were
# coverage (extract/walk.c, boiler.c step 1); docs/BENCHMARKS.md, "Generators of group 8
# (gen11m)".
# The ten of new = 9 (2026-11-28, issue 11, branch gen11n) are generators or layouts none
# of the others use, measured on main (fea9dc4) before anything was changed: Arm_Form (the
# Ada Reference Manual), pydoctor (Twisted's API), GRASS GIS's mkhtml.py, doctext (MPICH's
# man pages), texi2html 1.82 with LilyPond's init file, Macaulay2's generator, Agda's
# HTML backend, Sphinx's haiku theme (Breathe), Asciidoctor + DocBook XSL (Wireshark),
# Doxygen with GENERATE_TREEVIEW (Halide). Pages wrongly dropped, main -> branch: 42 -> 9
# of 11,592 (twisted-doc 34 -> 2, macaulay2-common 6 -> 5, agda-stdlib-doc 2 -> 2):
# pydoctor's div#main (extract/walk.c) and the title above a section's heading
# (extract/boiler.c step 8b); docs/BENCHMARKS.md, "Generators of group 9 (gen11n)".
# The seventeen of new = 10 (2026-11-28, issue 11, branch gen11o) are generators or
# layouts none of the others use, measured on main (7d6afc9) before anything was changed:
# Crystal Docs, hevea (Giac), Sphinx's nature theme (statsmodels, 6,245 pages),
# sphinx-book-theme (Dask), the bootstrap-astropy theme and scikit-learn's own, Javadoc of
# JDK 11 (Derby: its internals and its published API, two sets of the same packages),
# FFmpeg's Texinfo 6.8 with its Bootstrap init + Doxygen, docwriter (MkDocs 1.2 + Material
# 7.1, FreeType), DocBook XSL of MPlayer in 11 languages, cxref, Chez Scheme's
# LaTeX-to-HTML, EDoc, the *.part.html fragments of FreedomBox's DocBook HTML5, RDoc 6
# Darkfish (Tioga), Doxygen with the header of OpenCV, Haddock 2.25 of GHC's libraries
# (html/libraries: html/haddock/.build-html holds copies that falsedrop-score's glob does
# not read, so they would count as 5 false drops). Pages wrongly dropped on main: 13 of
# 27,822 (ghc-doc 8: Haddock's per-letter index pages, derby-doc 4: the same package page
# in its two Javadoc sets, identical extracted text, the published set's footer line too
# rare for the reference's template; ffmpeg-doc 1: a Doxygen example page and the source
# page of the same file). Haddock's letter bar was the one extraction fault (extract/walk.c);
# docs/BENCHMARKS.md, "Generators of group 10 (gen11o)".
# The seventeen of new = 11 (2026-11-28, issue 11, branch gen11p) are generators, themes or
# layouts none of the others use, measured on main (e2e64a5) before anything was changed:
# Asciidoctor's html5 backend (WeeChat, KiCad), GIMP's DocBook XSL help, DocBook XSL's own
# parameter reference, Doxygen's manual with its examples' output, the Sphinx themes of
# fish, ns-3, openstackdocstheme, sphinx_celery, pygame, Emscripten and Ghostscript,
# plasTeX, the Vala manual's generator, MkDocs with Django REST framework's theme and with
# Python-Markdown's nature theme, Doxygen with doxygen-awesome-css (wxWidgets). Pages
# wrongly dropped on main: 8 of 6,701, all wx3.2-doc: its own HTML_HEADER writes no
# <meta name="generator">, so its Doxygen layout went unknown (the -members.html pages
# lost their title and the class column of their rows); known by Doxygen's own marks
# (extract/walk.c) it is 0 (3,323 -> 2 pairs within 3); docs/BENCHMARKS.md, "Generators of
# group 11 (gen11p)".
# The fourteen of new = 12 (2026-11-28, issue 11, branch gen12q) are generators or layouts
# none of the others use, measured on main (3b419fc) before anything was changed: Slurm's
# site template, ProFTPD's and MHonArc's hand-written manuals, Hyperlatex (Dr. Geo, 6
# languages), the Modular DocBook HTML Stylesheet (DSSSL, Privoxy), mltex2html (MLRISC),
# Vim's TOhtml (NTL), hevea 2.36 (CFITSIO), odoc 2.1 (js_of_ocaml), Docutils under
# GraphicsMagick's banner, YARD 0.9.28, Spectre.css's docs, LaTeX2HTML 2023, tex2page
# (Scheme 48). Pages wrongly dropped on main: 3 of 2,440 (drgeo-doc 1: the copyright page,
# the same English text in every language, only the footer translated; libjs-of-ocaml-doc
# 2: odoc's class-type pages of js_of_ocaml and their copies re-exported by
# js_of_ocaml-lwt, one text, the reference keeping each library's breadcrumb): no
# extraction fault. Coverage found one:
# MHonArc's resource pages, sections of a flat run of <h2> under <body>, lost every short
# section after the note that won ("Default Setting: Off", "Version"): extract/boiler.c
# flat_section_level; docs/BENCHMARKS.md, "Generators of group 12 (gen12q)". lirc-doc was
# left out: lirc.org/html/plugins-index.html is a dangling symbolic link, which
# falsedrop-score cannot open.
# The eighteen of new = 13 (2026-11-28, issue 11, branch gen13q) are themes, versions and
# layouts of the generators the others already use, none of them on the 135 sites: the
# Sphinx themes of pytest (flask), ASE, pyqtgraph (sphinx_rtd_theme), CherryPy (alabaster
# with docutils 0.17), Pygments (pygments14), lmfit (sphinx13) and Pint (flasky); Doxygen
# 1.8.14 (Qwt), 1.9.1 with SFML's header, 1.9.4 of Mbed TLS, HDF5 and GLM; GTK-Doc of
# Clutter and libmm-glib; Texinfo 6.8 split per node (MIT/GNU Scheme, GNU Mailutils);
# AsciiDoc + DocBook XSL (NUT) and DocBook DSSSL (Slony-I). Pages wrongly dropped on main
# (3b419fc): 0 of 5,105 (18 pairs within 3). Coverage found one extraction fault: the
# folded rows of Doxygen's index trees (display:none) were dropped as hidden (GLM's
# modules.html kept 53 of 2,167 words): extract/walk.c; docs/BENCHMARKS.md, "Generators
# of group 13 (gen13q)".
# The thirteen of new = 14 (2026-11-28, issue 11, branch gen14r) are generators none of the
# others use, measured on main (de50ac0) before anything was changed: Natural Docs 1.51
# (Augeas), the SELinux reference policy's generator, the SGI STL manual (htmldoc), Xen's
# xen-headers, Tomcat 10's XSLT, Netscape Composer 4 (A+), SiSU 7.2 (Debian Live manual,
# 10 languages), zoem/aephea (MCL), yodl2html (C++ Annotations), LinuxDoc-Tools (BIRD 2),
# DebianDoc-SGML (Foca GNU/Linux, ISO-8859-1), POV-Ray's own tool, Apache Stylebook
# (Xalan-J's XSLTC pages). Pages wrongly dropped on main: 2 of 2,112 (augeas-doc 1,
# stl-manual 1: index pages of links that came out as their title, the Natural Docs letter
# bar counted as 55 words, the SGI <h1> inside a <center> taken for the container), both
# extraction faults of the hubs' rule (extract/boiler.c step 10): 0 on the branch;
# docs/BENCHMARKS.md, "Generators of group 14 (gen14r)". Candidates left out: most Java
# -doc packages (Javadoc only: gen15r's variants), lp-solve-doc (*.htm), r-base-html and
# scilab-doc (no HTML help pages shipped).
# The fifteen of new = 15 (2026-11-28, issue 11, branch gen15r) are themes, versions and
# layouts of the generators the 167 others use, none of them on those sites: Sphinx with
# pydata-sphinx-theme 0.8 (pandas 1.5), sphinx-book-theme alone (oneTBB), gevent's own
# templates on the basic theme, nature (PyWavelets), babel's theme and werkzeug's; Javadoc
# 8 (Commons Math 3.6, frames and class-use pages) and Commons Collections 4.2; gi-docgen
# of GDK 4 and libadwaita; Haddock of lens with its hyperlinked source; Doxygen 1.9.4 of
# ICU and of Irrlicht; Texinfo per node (flex, Libgcrypt). Pages wrongly dropped on main
# (de50ac0): 1 of 14,045 (libtbb-doc: two toctree pages that were both the
# sidebar <nav>, kept because it held more than half of the page: extract/boiler.c step
# 1). Coverage found two more: gi-docgen's member lists (a linked one-word <h6> over its
# description, taken for a teaser list; boiler.c holds_entry) and Javadoc 8's
# div.classUseContainer (extract/walk.c); docs/BENCHMARKS.md, "Generators of group 15
# (gen15r)".
# The twelve of new = 16 (2026-11-28, issue 11, branch gen16s) are generators none of the
# others use, measured on main (6c79063) before anything was changed: valadoc (folks),
# the help pages of CUPS (mantohtml, codedoc), Allegro 4's makedoc, Visual Page 2.0 and
# FrontPage (Euler), hand-written HTML through HTML Tidy (SAOImage DS9), BWidget's own
# script, sgmlspl (SGMLSpm), libvirt's website XSLT over docutils, DokuWiki's export (the
# gEDA wiki of Lepton EDA), HPLIP's help, RT 5's rt-static-docs (fragments without <html>),
# Splint's hand-written manual. Pages wrongly dropped on main: 1 of 1,478 (libfolks-doc:
# Folks.html ~ index.htm, valadoc's namespace page and the package's index listing the
# same classes; index.htm is one of four *.htm pages that simcrawl reads and the
# reference's *.html glob does not, so its J is 0; 0.598 with the page read): no false drop
# an extractor fault made. Coverage found two faults: DokuWiki's sections of linked names
# went as link lists (extract/walk.c generator_area), and docutils' headings that link back
# to the contents make a teaser list of libvirt's short sections (a fix lost Clang release
# pairs and was reverted); docs/BENCHMARKS.md, "Generators of group 16 (gen16s)". Candidates left
# out: libjs-jquery-flot-docs (a dangling symbolic link), fop-doc, libxerces2-java-doc and
# velocity-doc (Javadoc only), gnome-user-docs and gnumeric-doc (Mallard sources, no HTML),
# libcurl4-doc, tcl8.6-doc, pari-doc, yacas-doc (no HTML in Debian 12).
# The sixteen of new = 17 (2026-11-28, issue 11, branch gen17s) are themes, versions and
# layouts of the generators the 179 others use, none of them on those sites: Doxygen
# 1.8.13 (libpqxx) and 1.9.4 of libssh; Sphinx's classic theme under rsyslog's CSS, with
# mpi4py's autosummary pages and with Pillow's dark.css, PyMongo's pydoctheme, PyTango's
# tango_cs_theme and Mako's own templates; GTK-Doc of libgda 5 and libsoup 2.4; gi-docgen
# of GdkPixbuf and VTE; Javadoc 17 of logback (+ its hand-written manual in English and
# Japanese), Javadoc of JDK 11 of Commons IO and jsoup; DocBook XSL of the Linux-PAM
# guides. Pages wrongly dropped on main (6c79063): 0 of 4,467 (11 pairs within 3, all
# one text: gi-docgen's method and vfunc pages of one function, logback's classes of one
# name in its access and classic modules, the introduction, author and copyright pages
# of the three PAM guides, mpi4py.MPI.html and its copy in reference/). Coverage found
# two extraction faults, both gi-docgen's: a method's Description ("No description
# available." over the one-row table "Gets property" beside the linked property) went as
# a link list, and the namespace index's tables lost every name when one class had no
# description or a summary its "since: 2.2" (extract/boiler.c record_table, holds_labels);
# docs/BENCHMARKS.md, "Generators of group 17 (gen17s)".
# CACHE defaults to ~/.cache/simcrawl-dev (falsedrop-score's --cache).
# The last seven were added with fingerprint version 3 (2026-11-25), after its rules were
# chosen, as a check on sites nothing was tuned to.
# Baseline (main at ee5b1c3, falsedrop-score -v --sites <one site>; pages wrongly dropped):
#   git-doc 2 of 242 (6 false pairs: git-diff*/git-log/git-show, OPTIONS only kept),
#   sqlite3-doc 7 of 766 (14: syntax/ diagram pages fingerprinted on the menu),
#   libjson-glib-doc 1 of 274, lmdb-doc 0 of 108, mkdocs-doc 0 of 23,
#   mkdocs-literate-nav-doc 0 of 3, libglib2.0-doc 0 of 386, r-doc-html 0 of 7,
#   libcommons-lang3-java-doc: pairs aborts ("CharUtils.html: input is binary, not html").
set -e
CACHE=${SIMCRAWL_CACHE:-$HOME/.cache/simcrawl-dev}
mode=${1:-all}

# PKG|HTML_ROOT (inside the package)|generator|new (1: added for issue 11)
SITES='postgresql-doc-15|usr/share/doc/postgresql-doc-15/html|DocBook XSL (PostgreSQL)|0
python3.11-doc|usr/share/doc/python3.11/html|Sphinx (python_docs_theme)|0
python-django-doc|usr/share/doc/python-django-doc/html|Sphinx (Django theme)|0
git-doc|usr/share/doc/git-doc|AsciiDoc 10 (xhtml11 man pages)|1
sqlite3-doc|usr/share/doc/sqlite3|SQLite own generator (wrap.tcl); syntax/ diagrams|1
lmdb-doc|usr/share/doc/lmdb-doc/html|Doxygen 1.8.16|1
mkdocs-doc|usr/share/doc/mkdocs/html|MkDocs 1.4 (mkdocs theme, Bootstrap)|1
mkdocs-literate-nav-doc|usr/share/doc/mkdocs-literate-nav-doc/html|MkDocs 1.4 + Material 8.2|1
libglib2.0-doc|usr/share/gtk-doc/html|GTK-Doc 1.33 / DocBook XSL|1
libjson-glib-doc|usr/share/doc/json-glib-1.0|gi-docgen|1
r-doc-html|usr/share/R/doc/manual|Texinfo texi2any (one page a manual)|1
libcommons-lang3-java-doc|usr/share/doc/libcommons-lang3-java/api|Javadoc 17|1
libjsoncpp-doc|usr/share/doc/libjsoncpp-doc|Doxygen|1
libxerces-c-doc|usr/share/doc/libxerces-c-doc/html/apiDocs-3|Doxygen|1
libnftnl-dev-doc|usr/share/doc/libnftnl-dev/html|Doxygen|1
libclipper-doc|usr/share/doc/libclipper-dev/html|Doxygen|1
libghc-aeson-doc|usr/share/doc/libghc-aeson-doc/html|Haddock|1
asciidoctor-doc|usr/share/doc/asciidoctor-doc/html|YARD (Ruby)|1
sphinx-doc|usr/share/doc/sphinx-doc/html|Sphinx (its own theme)|1
libcairo2-doc|usr/share/gtk-doc/html/cairo|GTK-Doc|1
libgtk-3-doc|usr/share/gtk-doc/html|GTK-Doc (gtk3, gdk3, gail)|1
libsdl2-doc|usr/share/doc/libsdl2-doc/html|Doxygen (tree of d*/ folders)|1
libpango1.0-doc|usr/share/doc/libpango1.0-doc/reference|gi-docgen (Pango, PangoCairo, PangoFc, PangoOT)|1
libxkbcommon-doc|usr/share/doc/libxkbcommon-doc/html|Doxygen|1
libsoup-3.0-doc|usr/share/doc/libsoup-3.0|gi-docgen|1
rust-doc|usr/share/doc/rust-doc/html/book|mdBook (the Rust book, stubs of 3 retired editions)|2
libboost1.81-doc|usr/share/doc/libboost1.81-doc/doc/html|BoostBook / Quickbook (DocBook XSL)|2
nodejs-doc|usr/share/doc/nodejs/api|Node.js own generator|2
libxml2-doc|usr/share/doc/libxml2/html|libxml2 own XSLT pages|2
debian-handbook|usr/share/doc/debian-handbook/html/en-US|Publican (DocBook)|2
apache2-doc|usr/share/doc/apache2-doc/manual/en|Apache httpd manual XSLT (*.html.en: only *.html counted)|2
vim-doc|usr/share/doc/vim/html|Vim help files to HTML (long prose in <pre>)|2
zsh-doc|usr/share/doc/zsh-common/html|Yodl / texi2html|2
octave-doc|usr/share/doc/octave/octave.html|Texinfo texi2any (one page a node)|2
cmake-doc|usr/share/doc/cmake-data/html|Sphinx (the CMake theme)|2
maxima-doc|usr/share/doc/maxima-doc/html|Texinfo texi2html|2
erlang-doc|usr/share/doc/erlang-doc|Erlang/OTP erl_docgen (+ jinterface Javadoc)|3
libcalendar-ocaml-doc|usr/share/doc/libcalendar-ocaml/_html|odoc (OCaml)|3
python-flask-doc|usr/share/doc/python-flask-doc/html|Sphinx (Pallets theme)|3
python-requests-doc|usr/share/doc/python-requests-doc/html|Sphinx (alabaster theme)|3
gnustep-base-doc|usr/share/GNUstep/Documentation|GNUstep autogsdoc|3
qtconnectivity5-doc-html|usr/share/qt5/doc|QDoc (Qt 5.15: qtbluetooth, qtnfc)|3
libvips-doc|usr/share/doc/libvips-doc/html|Doxygen 1.9.4 (C++ API, with search/)|3
gettext-doc|usr/share/doc/gettext|texi2html 1.78a (one page a node) + javadoc, csharpdoc|3
nim-doc|usr/share/doc/nim/html|the Nim doc generator (nim doc)|3
gnuplot-doc|usr/share/doc/gnuplot/htmldocs|LaTeX2HTML 2022.2|4
fp-docs-3.2.2|usr/share/doc/fp-docs/3.2.2/fcl|fpdoc (Free Pascal, the FCL reference)|4
groovy-doc|usr/share/doc/groovy/gapi|Groovydoc (Groovy 2.4)|4
libreoffice-help-en-us|usr/share/libreoffice/help/en-US|LibreOffice help (its own XSLT)|4
libglibmm-2.4-doc|usr/share/doc/libglibmm-2.4-doc|Doxygen 1.9.4 (glibmm: the mm layout of the C++ bindings)|5
libgtkmm-3.0-doc|usr/share/doc/libgtkmm-3.0-doc|Doxygen 1.9.4 (gtkmm: mm layout)|5
dbus-1-doc|usr/share/doc|Doxygen 1.9.4 (libdbus API) + xmlto DocBook XSL (the specification)|5
libbotan-2-doc|usr/share/doc/libbotan-2-doc/handbook|Sphinx (Botan handbook, agogo theme)|5
diffutils-doc|usr/share/doc/diffutils|Texinfo makeinfo 6 (one page a node)|5
aptitude-doc-en|usr/share/doc/aptitude/html/en|DocBook XSL (xsltproc, chunked user manual)|5
haproxy-doc|usr/share/doc/haproxy|HAProxy dconv (configuration manual) + Sphinx (Lua API)|5
ant-doc|usr/share/doc/ant|hand-written HTML manual + Javadoc (JDK 17 doclet, the Ant API)|5
db5.3-doc|usr/share/doc/db5.3-doc/api_reference|DocBook XSL 1.73 (Berkeley DB C, C++, STL, Tcl APIs)|5
libstdc++-12-doc|usr/share/doc/gcc-12-base/libstdc++/manual|DocBook XSL (the libstdc++ manual)|5
racket-doc|usr/share/doc/racket/reference|Scribble (Racket 8.7, the Racket Reference)|6
gap-doc|usr/share/gap/doc/ref|GAPDoc (GAP 4.12 reference manual)|6
python-sqlalchemy-doc|usr/share/doc/python-sqlalchemy-doc/html|Sphinx (SQLAlchemy 1.4 zzzeeksphinx theme)|6
python-scipy-doc|usr/share/doc/python-scipy-doc/html|Sphinx (pydata-sphinx-theme, SciPy 1.10)|6
scala-doc|usr/share/doc/scala-2.11/api/library|Scaladoc 2.11 (the standard library API)|6
docutils-doc|usr/share/doc/docutils-doc|Docutils rst2html (no Sphinx)|6
libjs-jquery-ui-docs|usr/share/doc/libjs-jquery-ui-docs|jQuery UI demos (hand-written example pages)|6
postfix-doc|usr/share/doc/postfix/html|Postfix hand-written HTML + man pages to HTML|6
exim4-doc-html|usr/share/doc/exim4-doc-html/spec_html|xfpt + SDoP (the Exim specification)|6
swig4.0-doc|usr/share/doc/swig4.0-doc|SWIG manual (hand-written HTML, makechap.py)|6
groff|usr/share/doc/groff-base/html|grohtml (groff 1.22 -Thtml)|6
cppreference-doc-en-html|usr/share/cppreference/doc/html/en|MediaWiki 1.21 (cppreference.com offline copy)|7
ikiwiki|usr/share/doc/ikiwiki/html|ikiwiki 3.2020 (the ikiwiki wiki, Markdown pages)|7
ncurses-doc|usr/share/doc/ncurses-doc/html|man2html (T. Dickey, ncurses man pages) + hand-written HTML|7
haskell98-report|usr/share/doc/haskell98-report/html|Haskell 98 Report (its own LaTeX-to-HTML tool)|7
libapache2-mod-perl2-doc|usr/share/doc/libapache2-mod-perl2-doc|Pod::Simple::XHTML (pod2html, mod_perl 2 docs)|7
sgt-puzzles|usr/share/sgt-puzzles/help/en|Halibut (help of the sgt-puzzles games)|7
xfig-doc|usr/share/doc/xfig/html|hand-written HTML with frames (xfig manual, English + Japanese)|7
swi-prolog-doc|usr/share/swi-prolog/doc|SWI-Prolog latex2html (its own, Prolog) + pldoc|7
yorick-doc|usr/share/doc/yorick-doc|makeinfo 4 (Yorick manual) + hand-written reference cards|7
pike8.0-doc|usr/share/doc/pike8.0-doc/html/reference/ex/predef_3A_3A/ADT|Pike autodoc (the ADT module reference)|7
gri-html-doc|usr/share/doc/gri/html|Gri own texinfo-to-HTML script|7
cargo-doc|usr/share/doc/cargo/doc|rustdoc (Rust 1.66: the API of the syn crate and source pages)|8
python-sympy-doc|usr/share/doc/python-sympy-doc/html|Sphinx (furo theme, SymPy 1.11)|8
python-cryptography-doc|usr/share/doc/python-cryptography-doc/html|Sphinx (sphinx_rtd_theme)|8
allegro5-doc|usr/share/doc/allegro5-doc/refman|pandoc (the Allegro 5 reference manual)|8
libbatteries-ocaml-doc|usr/share/doc/libbatteries-ocaml-doc/html/api|ocamldoc (OCaml Batteries API)|8
tcllib|usr/share/doc/tcllib/html|Tcl doctools (the manual pages of tcllib as HTML)|8
python-lxml-doc|usr/share/doc/python-lxml/html|Docutils rst2html with the menu of lxml (mkhtml.py) + Sphinx API pages|8
python-mpmath-doc|usr/share/doc/python-mpmath-doc/html|Sphinx (classic theme)|8
libeigen3-doc|usr/share/doc/libeigen3-dev/html|Doxygen 1.9.4 with the header, footer and menu of Eigen|8
libjs-bootstrap5-doc|usr/share/doc/libjs-bootstrap5|Hugo (the example pages of Bootstrap 5)|8
ada-reference-manual-2012|usr/share/doc/ada-reference-manual-2012/arm2012.html|Arm_Form (the own generator of the Ada 2012 Reference Manual)|9
twisted-doc|usr/share/doc/twisted-doc/html|pydoctor 22.9 (the Twisted API) + Sphinx (the howtos)|9
grass-doc|usr/share/doc/grass-doc/html|GRASS GIS manual pages (its own mkhtml.py)|9
mpich-doc|usr/share/doc/mpich-doc/html|doctext (the MPI man pages of MPICH, HTML 3.2)|9
lilypond-doc-html|usr/share/doc/lilypond/html/Documentation|texi2html 1.82 with the init file and CSS of LilyPond|9
macaulay2-common|usr/share/doc/Macaulay2/Macaulay2Doc/html|the documentation generator of Macaulay2 (XHTML + MathML)|9
agda-stdlib-doc|usr/share/doc/agda-stdlib/html|the HTML backend of Agda (highlighted source of the standard library)|9
breathe-doc|usr/share/doc/breathe-doc/html|Sphinx (haiku theme) + the Doxygen test pages of Breathe|9
wireshark-doc|usr/share/doc/wireshark|Asciidoctor to DocBook XSL (snapshot), chunked user and developer guides|9
halide14-api-doc|usr/share/doc/halide14/html|Doxygen 1.9.4 with GENERATE_TREEVIEW (navtree)|9
crystal-doc|usr/share/doc/crystal/api-docs|Crystal Docs 1.6 (the API of the Crystal standard library)|10
giac-doc|usr/share/giac/doc|hevea 2.29-2.36 (the Giac/Xcas manuals: command reference in English and Greek)|10
python-statsmodels-doc|usr/share/doc/python-statsmodels-doc/html|Sphinx (nature theme; statsmodels 0.13, numpydoc API pages)|10
python-dask-doc|usr/share/doc/python-dask-doc/html|Sphinx (dask-sphinx-theme on sphinx-book-theme)|10
derby-doc|usr/share/doc/derby-doc/javadoc|Javadoc of JDK 11 (the internals and published API of Apache Derby)|10
ffmpeg-doc|usr/share/doc/ffmpeg|Texinfo 6.8 with the Bootstrap init file of FFmpeg (the manuals) + Doxygen 1.9.4 (the API)|10
freetype2-doc|usr/share/doc/libfreetype-dev|docwriter: MkDocs 1.2 + Material 7.1 (the API reference) + hand-written HTML|10
mplayer-doc|usr/share/doc/mplayer|DocBook XSL snapshot (the MPlayer manual in 11 languages) + hand-written tech/ pages|10
cxref-doc|usr/share/doc/cxref|cxref 1.6e (cross-referenced C source of its example)|10
chezscheme-doc|usr/share/doc/chezscheme-doc|the LaTeX-to-HTML tool of Chez Scheme (its User Guide)|10
erlang-proper-doc|usr/share/doc/erlang-proper-doc|EDoc (Erlang; the API of PropEr)|10
freedombox-doc-en|usr/share/freedombox/manual/en|DocBook XSL HTML5 fragments (*.part.html, the FreedomBox manual exported from its wiki)|10
python-sklearn-doc|usr/share/doc/python-sklearn-doc/html|Sphinx (the own theme of scikit-learn, sphinx-gallery)|10
python-astropy-doc|usr/share/doc/python-astropy-doc/html|Sphinx (bootstrap-astropy theme, automodapi pages)|10
ruby-tioga-doc|usr/share/doc/ruby-tioga-doc/rdoc|RDoc 6 (Darkfish; the API of Tioga)|10
opencv-doc|usr/share/doc/opencv-doc/opencv4/html|Doxygen 1.9.4 with the header and tutorials of OpenCV 4.6 + its Java API (Javadoc)|10
ghc-doc|usr/share/doc/ghc-doc/html/libraries|Haddock 2.25 (the libraries of GHC 9.0, linuwial theme, per-letter index pages)|10
weechat-doc|usr/share/doc/weechat-doc/html|Asciidoctor 2.0.18 (html5 backend, default stylesheet; the WeeChat guides in 8 languages)|11
kicad-doc-en|usr/share/doc/kicad/help/en|Asciidoctor 2.0.18 (the KiCad 6 manuals, one page a manual)|11
gimp-help-en|usr/share/gimp/2.0/help/en|DocBook XSL (snapshot) with the help customisation of GIMP 2.10|11
docbook-xsl-doc-html|usr/share/doc/docbook-xsl-doc-html/doc|the reference of DocBook XSL 1.79.1 (one refentry page a parameter or processing instruction)|11
doxygen-doc|usr/share/doc/doxygen/html|Doxygen 1.9.4 (its own manual, and the output of its examples: small sites of the same layout)|11
fish-common|usr/share/doc/fish|Sphinx (the own theme of fish 3.6 after python_docs_theme; one page a command)|11
ns3-doc|usr/share/doc/ns3|Sphinx (the ns-3 theme: its manual, model library and tutorial)|11
python-openstackclient-doc|usr/share/doc/python-openstackclient-doc/html|Sphinx (openstackdocstheme; one page a command object)|11
python-celery-doc|usr/share/doc/python-celery-doc/html|Sphinx (sphinx_celery theme; API reference and module source pages)|11
python-pygame-doc|usr/share/doc/python-pygame-doc/html|Sphinx (the pygame theme)|11
emscripten-doc|usr/share/doc/emscripten-doc/html|Sphinx (the Emscripten theme, from sphinx_rtd_theme)|11
ghostscript-doc|usr/share/doc/ghostscript/html|Sphinx (the Ghostscript 10 theme)|11
python-plastex-doc|usr/share/doc/python3-plastex/html|plasTeX (LaTeX to HTML; its own manual)|11
vala-0.56-doc|usr/share/devhelp/books/vala-0.56|the generator of the Vala Reference Manual (devhelp book)|11
python-djangorestframework-doc|usr/share/doc/python3-djangorestframework/html|MkDocs (the own Bootstrap 2 theme of Django REST framework; one index.html a page)|11
python-markdown-doc|usr/share/doc/python-markdown-doc/docs|MkDocs (the nature theme of Python-Markdown)|11
wx3.2-doc|usr/share/doc/wx3.2-doc/html|Doxygen 1.9.4 with doxygen-awesome-css (the wxWidgets 3.2 API)|11
slurm-wlm-doc|usr/share/doc/slurm-wlm/html|the site template of Slurm (hand-written pages and its man pages to HTML)|12
proftpd-doc|usr/share/doc/proftpd-doc|hand-written HTML of ProFTPD (howtos and one page a module)|12
drgeo-doc|usr/share/drgeo/help|Hyperlatex 2.6 (the Dr. Geo manual in 6 languages)|12
privoxy|usr/share/doc/privoxy|Modular DocBook HTML Stylesheet 1.79 (DSSSL, jade: the Privoxy manuals)|12
smlnj-doc|usr/share/doc/smlnj-doc|mltex2html (the MLRISC manual of SML/NJ)|12
libntl-dev|usr/share/doc/libntl-dev/NTL|Vim 8 TOhtml (the C++ headers of NTL) + hand-written HTML|12
libcfitsio-doc|usr/share/doc/libcfitsio-dev|hevea 2.36 (the CFITSIO and FITSIO manuals)|12
libjs-of-ocaml-doc|usr/share/doc/libjs-of-ocaml-doc|odoc 2.1 (the js_of_ocaml API) + the wikidoc manual of Ocsigen|12
graphicsmagick|usr/share/doc/graphicsmagick/www|Docutils with the banner and menu of GraphicsMagick (its site and C API pages)|12
yard-doc|usr/share/doc/yard/doc|YARD 0.9.28 (the default template; the API of YARD itself)|12
mhonarc|usr/share/doc/mhonarc|hand-written HTML of MHonArc (one page a resource)|12
libjs-spectre-docs|usr/share/doc/libjs-spectre-docs|the docs of Spectre.css (Pug templates; component pages of one layout)|12
latex2html|usr/share/doc/latex2html/html|LaTeX2HTML 2023 (its own manual)|12
scheme48-doc|usr/share/doc/scheme48/html|tex2page 20130325 (the Scheme 48 reference manual)|12
python-pytest-doc|usr/share/doc/python-pytest-doc/html|Sphinx 5.3 (the flask theme of pytest 7; one announce/ page a release)|13
python-ase-doc|usr/share/doc/python-ase-doc/html|Sphinx (the own theme of ASE, after sphinx_rtd_theme)|13
python-pyqtgraph-doc|usr/share/doc/python-pyqtgraph-doc/html|Sphinx (sphinx_rtd_theme with the custom.css of pyqtgraph)|13
python-cherrypy3-doc|usr/share/doc/python-cherrypy3-doc/html|Sphinx 4.5 (alabaster with docutils 0.17; pkg/ API pages)|13
python-pygments-doc|usr/share/doc/python-pygments-doc/html|Sphinx (the pygments14 theme)|13
python-lmfit-doc|usr/share/doc/python3-lmfit/html|Sphinx 5.3 (the sphinx13 theme + sphinx-gallery)|13
python-pint-doc|usr/share/doc/python-pint-doc/html|Sphinx (the flasky theme)|13
libqwt-doc|usr/share/doc/libqwt-doc/html|Doxygen 1.8.14 (the Qwt 6.1 API)|13
libsfml-doc|usr/share/doc/libsfml-dev/html|Doxygen 1.9.1 with the header and footer of SFML|13
libmbedtls-doc|usr/share/doc/libmbedtls-dev/apidoc|Doxygen 1.9.4 (the C API of Mbed TLS: file and struct pages)|13
libhdf5-doc|usr/share/doc/libhdf5-doc/html|Doxygen 1.9.4 (the HDF5 C++ reference)|13
libglm-doc|usr/share/doc/libglm-doc|Doxygen 1.9.4 (GLM: numbered a00NNN pages, header source listings)|13
libclutter-1.0-doc|usr/share/gtk-doc/html/clutter|GTK-Doc (Clutter 1.0)|13
libmm-glib-doc|usr/share/gtk-doc/html/libmm-glib|GTK-Doc (libmm-glib of ModemManager)|13
mit-scheme-doc|usr/share/doc/mit-scheme-doc/html|Texinfo 6.8 texi2any (four MIT/GNU Scheme manuals, one page a node)|13
mailutils-doc|usr/share/doc/mailutils/mailutils.html|Texinfo 6.8 makeinfo (the GNU Mailutils manual, one page a node)|13
nut-doc|usr/share/doc/nut-doc/html|AsciiDoc a2x + DocBook XSL, chunked (the Network UPS Tools guides)|13
slony1-2-doc|usr/share/doc/slony1-2-doc/adminguide|DocBook DSSSL (the Modular DocBook HTML Stylesheet of jade)|13
augeas-doc|usr/share/doc/augeas-doc|Natural Docs 1.51 (the lens reference and the C API of Augeas)|14
selinux-policy-doc|usr/share/doc/selinux-policy-doc/html|the documentation generator of the SELinux reference policy (one page a policy module, templates and interfaces)|14
stl-manual|usr/share/doc/stl-manual/html|the SGI STL manual (hand-written pages run through htmldoc)|14
xen-doc|usr/share/doc/xen/html|the xen-headers script of Xen (hypercall headers as HTML, three architectures) + pandoc man pages|14
tomcat10-docs|usr/share/tomcat10-docs/docs|the own XSLT of Apache Tomcat 10 (its configuration reference and howtos)|14
aplus-fsf-doc|usr/share/doc/aplus-fsf-doc/html|Netscape Composer 4 (the A+ reference manual, one page a primitive)|14
live-manual-html|usr/share/doc/live-manual/html|SiSU 7.2 (the Debian Live manual in 10 languages, one page a section)|14
mcl-doc|usr/share/doc/mcl/html|zoem with the aephea macros (the manual pages of MCL)|14
c++-annotations-html|usr/share/doc/c++-annotations/html|yodl2html (the C++ Annotations, one page a chapter)|14
bird2-doc|usr/share/doc/bird2|LinuxDoc-Tools 1.0.9 (SGML; the BIRD 2 user and programmer guides)|14
focalinux-html|usr/share/doc/focalinux/html|DebianDoc-SGML (the Foca GNU/Linux guide in Portuguese, ISO-8859-1)|14
povray-doc|usr/share/doc/povray/html|the own wiki-to-HTML tool of POV-Ray 3.7 (long reference pages)|14
libxalan2-java-doc|usr/share/doc/libxalan2-java/xsltc|Apache Stylebook (the XSLTC design pages of Xalan-J)|14
python-pandas-doc|usr/share/doc/python-pandas-doc/html|Sphinx 5 (pydata-sphinx-theme 0.8 of pandas 1.5: one reference/api page a method)|15
libtbb-doc|usr/share/doc/libtbb-dev/html|Sphinx (sphinx-book-theme alone: the oneTBB guide and reference)|15
python-gevent-doc|usr/share/doc/python-gevent-doc/html|Sphinx (basic theme with the own templates of gevent; API and _modules source pages)|15
python-pywt-doc|usr/share/doc/python-pywt-doc/html|Sphinx (nature theme of PyWavelets, doctest regression pages)|15
python-babel-doc|usr/share/doc/python-babel-doc/html|Sphinx (the babel theme after the old flask theme)|15
python-werkzeug-doc|usr/share/doc/python-werkzeug-doc/html|Sphinx (the werkzeug theme of Pallets 2022)|15
libcommons-math3-java-doc|usr/share/doc/libcommons-math3-java/api|Javadoc 8 style (HTML 4.01 with frames, class-use pages: Commons Math 3.6)|15
libcommons-collections4-java-doc|usr/share/doc/libcommons-collections4-java/api|Javadoc 8 style (Commons Collections 4.2)|15
libgtk-4-doc|usr/share/doc/libgtk-4-doc/gdk4|gi-docgen 2022 (the GDK 4 API: one page a class, method, function)|15
libadwaita-1-doc|usr/share/doc/libadwaita-1|gi-docgen (libadwaita 1.2, with its own guide pages)|15
libghc-lens-doc|usr/share/doc/libghc-lens-doc/html|Haddock 2.25 (lens 5: module pages + hyperlinked source src/)|15
icu-doc|usr/share/doc/icu-doc/html|Doxygen 1.9.4 (the ICU 72 C and C++ API)|15
libirrlicht-doc|usr/share/doc/libirrlicht-dev/html|Doxygen 1.9.4 with the footer of Irrlicht (+ its search/ result pages)|15
flex-doc|usr/share/doc/flex-doc/html|Texinfo (the flex manual, one page a node)|15
libgcrypt20-doc|usr/share/doc/libgcrypt20-doc/html|Texinfo (the Libgcrypt manual, one page a node)|15
libfolks-doc|usr/share/devhelp/books/folks|valadoc (the Vala API of folks: one page a class, method, property, constant)|16
cups-server-common|usr/share/cups/doc-root|the help pages of CUPS 2.4 (its mantohtml man pages, codedoc API pages, hand-written help)|16
allegro4-doc|usr/share/doc/allegro4-doc/html|makedoc (the own ._tx-to-HTML tool of Allegro 4: one page a chapter of the API)|16
euler-doc|usr/share/doc/euler-doc|Visual Page 2.0 for Windows and FrontPage 5 (the Euler reference, English, French, German)|16
saods9-doc|usr/share/doc/saods9|hand-written HTML through HTML Tidy for Mac OS X (the SAOImage DS9 reference and release notes)|16
bwidget|usr/share/doc/bwidget/html|the own XML-to-HTML script of BWidget (one page a Tk widget)|16
sgmls-doc|usr/share/doc/sgmls-doc|the HTML of SGMLSpm and sgmlspl (1990s, made with sgmlspl itself)|16
libvirt-doc|usr/share/doc/libvirt-doc/html|the website XSLT of libvirt over docutils (its manual, XML formats, kbase, man pages)|16
lepton-eda|usr/share/doc/lepton-eda/wiki|DokuWiki export (the gEDA wiki as shipped by Lepton EDA, pages in several languages)|16
hplip-doc|usr/share/doc/hplip-doc|the hand-written help pages of HPLIP (one template, ISO-8859-1)|16
rt5-doc-html|usr/share/doc/rt5-doc-html|the rt-static-docs script of Request Tracker 5 (Pod::Simple::XHTML fragments without <html> or <head>)|16
splint-doc-html|usr/share/doc/splint-doc-html/html|the hand-written HTML of the Splint manual (table layout, one long page a chapter)|16
libpqxx-doc|usr/share/doc/libpqxx-doc/html|Doxygen 1.8.13 (the libpqxx 6 reference) + DocBook XSL 1.79.1 (its tutorial)|17
libssh-doc|usr/share/doc/libssh-dev/html|Doxygen 1.9.4 (the libssh API and guide, with its search/ result pages)|17
rsyslog-doc|usr/share/doc/rsyslog-doc/html|Sphinx (classic theme with the rsyslog.css of rsyslog 8: one page a module and a RainerScript function)|17
libgda-5.0-doc|usr/share/gtk-doc/html/libgda-5.0|GTK-Doc 1.33 (libgda 5)|17
libsoup2.4-doc|usr/share/gtk-doc/html/libsoup-2.4|GTK-Doc 1.33 (libsoup 2.4)|17
libgdk-pixbuf2.0-doc|usr/share/doc/libgdk-pixbuf2.0-doc/html|gi-docgen (GdkPixbuf 2.42 and GdkPixdata)|17
libvte-2.91-doc|usr/share/doc/vte-2.91|gi-docgen (VTE 0.70)|17
liblogback-java-doc|usr/share/doc/liblogback-java|Javadoc 17 (the logback API, class-use pages) + the hand-written logback manual in English and Japanese|17
libcommons-io-java-doc|usr/share/doc/libcommons-io-java/api|Javadoc of JDK 11 (Commons IO 2.11, class-use pages)|17
libjsoup-java-doc|usr/share/doc/libjsoup-java/api|Javadoc of JDK 11 (jsoup 1.15, class-use pages)|17
python-mpi4py-doc|usr/share/doc/python-mpi4py-doc/html|Sphinx (classic theme; one autosummary reference page a class, method and attribute of mpi4py)|17
python-pymongo-doc|usr/share/doc/python-pymongo-doc/html|Sphinx (the pydoctheme of PyMongo 3.11)|17
python-tango-doc|usr/share/doc/python-tango-doc/html|Sphinx (the tango_cs_theme of PyTango)|17
python-mako-doc|usr/share/doc/python-mako-doc/html|Sphinx with the own templates of Mako (docs.css, no html_theme)|17
libpam-doc|usr/share/doc/libpam-doc/html|DocBook XSL (the Linux-PAM guides, one page a module and a function)|17
python-pil-doc|usr/share/doc/python-pil-doc/html|Sphinx (classic theme with the dark.css of Pillow 9; release notes and _modules source pages)|17'

# fetch PKG: download and unpack once; fails loudly when apt-get cannot find it. The
# package is unpacked into PKG.part and renamed when whole, so a run that is killed, or
# one that looks while another unpacks, never takes a half-unpacked site for a whole one.
fetch() {
    if ! ls "$CACHE/debs/$1"_*.deb >/dev/null 2>&1; then
        echo "sites: apt-get download $1" >&2
        (cd "$CACHE/debs" && { apt-get download "$1" >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 && apt-get download "$1" >/dev/null; }; })
    fi
    if [ ! -d "$CACHE/sites/$1" ]; then
        echo "sites: dpkg -x $1" >&2
        rm -rf "$CACHE/sites/$1.part"
        dpkg -x "$(ls "$CACHE/debs/$1"_*.deb | tail -n 1)" "$CACHE/sites/$1.part" &&
            mv "$CACHE/sites/$1.part" "$CACHE/sites/$1"
    fi
}

# One run at a time fetches: two runs at once (two engineers' benchmarks) raced on the same
# package before, one finding a folder the other was still unpacking. The lock is held
# until this script exits (its file descriptor 9).
mkdir -p "$CACHE/debs" "$CACHE/sites"
exec 9>"$CACHE/sites.lock"
flock 9

out=
echo "$SITES" | {
    while IFS='|' read -r pkg root gen new; do
        [ "$mode" = --new ] && [ "$new" = 0 ] && continue
        fetch "$pkg"
        if [ ! -d "$CACHE/sites/$pkg/$root" ]; then
            echo "sites: $pkg has no $root" >&2
            exit 1
        fi
        if [ "$mode" = --table ]; then
            n=$(find "$CACHE/sites/$pkg/$root" -name '*.html' | wc -l)
            printf '%s\t%s\t%s\t%s pages\n' "$pkg" "$root" "$gen" "$n"
        else
            out="${out:+$out,}$pkg:$root"
        fi
    done
    [ "$mode" = --table ] || echo "$out"
}
