"""Offline stand-in for the get-pip.py bootstrap script of ansible-test.

ansible-test creates an empty virtual environment per sanity test and runs a
downloaded get-pip.py in it. That download comes from a host outside the
package index, so this script does the same from what is already here: it
installs the pip bundled with Python (ensurepip), then installs the pinned
packages ansible-test asked for from the package index.
"""

import subprocess
import sys

# Options only get-pip.py understands.
ONLY_GET_PIP = {"--no-setuptools", "--no-wheel"}

# In a child process: ensurepip blanks the pip configuration (PIP_CONFIG_FILE)
# of the process it runs in, and the install below needs that configuration.
subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"], stdout=subprocess.DEVNULL)
args = [a for a in sys.argv[1:] if a not in ONLY_GET_PIP]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "--quiet", *args]))
