#!/usr/bin/env python3
"""Checks that a command's --help is true about its config keys (issue 18).

  config_keys.py SIMCRAWL COMMAND HELP_FILE VALUES_FILE STOP_TEXT MIN_KEYS [ARG...]

HELP_FILE holds `simcrawl COMMAND --help`; its sentence "options (each but --a, --b ... is
also a key" names the command-line-only options. Every other option the help lists must
be accepted in a [COMMAND] section of a config file with the value VALUES_FILE gives it
(lines "KEY VALUE"); the named ones must be refused there with an error naming the file,
the line and the key. Each run is `simcrawl COMMAND --config FILE ARG...`, which must
stop with exit status 1 and STOP_TEXT on stderr once the file was read (crawl: no seed
URL; serve: a bad --threads after it). Prints "keys ok: ..." or one line per problem.
"""
import os, re, subprocess, sys

simcrawl, command, help_file, values_file, stop_text, min_keys = sys.argv[1:7]
extra = sys.argv[7:]
help_text = open(help_file).read()
options = re.findall(r'^  (?:-[a-z], )?--([a-z][a-z-]*)', help_text, re.M)
m = re.search(r'options \(each but (.*?) is also a key', help_text, re.S)
if not m:
    sys.exit('%s --help does not say which options are not config keys' % command)
only = re.findall(r'--([a-z][a-z-]*)', m.group(1))
values = dict(line.split(' ', 1) for line in open(values_file).read().splitlines())
conf = os.path.join(os.path.dirname(values_file), 'k.conf')
problems = []


def run(key, value):
    with open(conf, 'w') as f:
        f.write('[%s]\n# one key\n%s = %s\n' % (command, key, value))
    r = subprocess.run([simcrawl, command, '--config', conf] + extra, capture_output=True,
                       text=True, timeout=30)
    return r.returncode, r.stderr


keys = [o for o in options if o not in only]
if len(keys) < int(min_keys):
    problems.append('only %d keys read from %s --help' % (len(keys), command))
for key in keys:
    if key not in values:
        problems.append('%s: the help calls it a config key, and this test has no value for it' % key)
        continue
    rc, err = run(key, values[key])
    if rc != 1 or stop_text not in err:
        problems.append('%s = %s: not accepted in a config file (exit %d): %s'
                        % (key, values[key], rc, err.strip()[:200]))
for key in only:
    rc, err = run(key, 'yes')
    want = "%s:3: '%s' is not a config key: --%s is given on the command line only" % (conf, key, key)
    if rc != 1 or want not in err:
        problems.append('%s: not refused as it should be (exit %d): %s' % (key, rc, err.strip()[:200]))
for key in values:
    if key not in options:
        problems.append('%s: a value here for an option %s --help does not list' % (key, command))
if 'help' not in only or 'config' not in only:
    problems.append('the help names %s as command-line only' % only)
print('\n'.join(problems) if problems else 'keys ok: %d accepted, %d refused' % (len(keys), len(only)))
