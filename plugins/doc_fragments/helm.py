# Copyright: lcm.openstack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    """Options every lcm.openstack module that runs Helm shares."""

    DOCUMENTATION = r"""
options:
  binary_path:
    description: Path of Helm 3 or Helm 4. Defaults to E(HELM_BIN), then C(helm) on PATH.
    type: path
    aliases: [helm_binary]
  secret_key_pattern:
    description:
      - Regular expression matched against each word of a value's key (C(keystone_db_password)
        gives C(keystone), C(db), C(password)); strings under a matching key are masked in
        everything the module prints or returns. The default matches password, passwd, pass,
        passphrase, pw, token, secret, key, apikey, credential and private, singular or plural.
    type: str
"""
