"""Debian packages for the benchmark scripts (neardup_study.py, relpairs.py,
weight_study.py): a package's .deb fetched with apt-get and unpacked once, the layout
../shared/tools/neardup-score and falsedrop-score use (a directory per package)."""
import glob
import os
import subprocess


def unpack(pkg, dest, debs):
    """Unpack PKG into dest unless dest exists, and return dest. The .deb is looked for in
    debs, and fetched there with `apt-get download` when missing (after one `apt-get
    update` if the first download fails: a fresh machine's lists may be empty)."""
    if not os.path.isdir(dest):
        os.makedirs(debs, exist_ok=True)
        pattern = os.path.join(glob.escape(debs), glob.escape(pkg) + '_*.deb')
        if not glob.glob(pattern):
            if subprocess.run(['apt-get', 'download', pkg], cwd=debs).returncode != 0:
                subprocess.run(['apt-get', 'update', '-qq'], check=True)
                subprocess.run(['apt-get', 'download', pkg], cwd=debs, check=True)
        subprocess.run(['dpkg', '-x', sorted(glob.glob(pattern))[-1], dest], check=True)
    return dest
