"""The execution environment (execution-environment.yml) builds what the flows
need: Helm at the test bed's pinned version, the modules' Python libraries,
and the lcm.openstack and kubernetes.core collections.

No container engine is needed: `ansible-builder create` writes the build
context offline, and the steps of the image build that decide its content are
run here against that context: the collection install from the context's
requirements.yml, ansible-builder's own introspection of the installed
collections, and the Helm install step with a stand-in for get.helm.sh.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Dict, List, Optional

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EE_FILE = ROOT / "execution-environment.yml"
GALAXY = yaml.safe_load((ROOT / "galaxy.yml").read_text())
# Addresses nothing listens on: whatever tries the network through a
# proxy-aware client, pip or ansible-galaxy fails instead of reaching it.
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "PIP_NO_INDEX": "1", "ANSIBLE_GALAXY_SERVER": "http://127.0.0.1:9"}


def helm_pins() -> Dict[str, str]:
    """The Helm releases the test bed builds: {"3": "v3.x.y", "4": "v4.x.y"}."""
    text = (ROOT / "tests/cluster/helm/go.mod").read_text()
    pins = dict(re.findall(r"^\s*helm\.sh/helm/v(\d+) (v[0-9.]+)\b", text, re.M))
    assert set(pins) == {"3", "4"}, pins
    return pins


def run(cmd: List[str], cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **OFFLINE),
                          cwd=cwd, check=False)


class Context:
    """The build context ansible-builder writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.containerfile = (path / "Containerfile").read_text()
        self.build = path / "_build"

    def stage(self, name: str) -> str:
        """The instructions of one build stage (base, galaxy, builder, final)."""
        parts = re.split(r"^FROM \S+ AS (\w+)$", self.containerfile, flags=re.M)
        stages = dict(zip(parts[1::2], parts[2::2]))
        assert name in stages, f"no stage {name}: {sorted(stages)}"
        return stages[name]

    def helm_step(self) -> str:
        """The final stage's Helm install, as the shell script its RUN runs."""
        final = self.stage("final")
        m = re.search(r"^ARG HELM_VERSION=\S+\nRUN ((?:.*\\\n)*.*)$", final, re.M)
        assert m, "the final stage has no `ARG HELM_VERSION=...` followed by a RUN"
        return m.group(1).replace("\\\n", "\n")


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory) -> Context:
    """`ansible-builder create`, run offline on a copy of the definition with
    the collection tarball where the definition expects it."""
    work = tmp_path_factory.mktemp("ee")
    definition = yaml.safe_load(EE_FILE.read_text())
    shutil.copy(EE_FILE, work / EE_FILE.name)
    deps = definition["dependencies"]
    for key in ("python", "galaxy"):
        assert isinstance(deps[key], str), f"dependencies.{key} should name a file"
        shutil.copy(ROOT / deps[key], work / deps[key])
    for entry in definition.get("additional_build_files", []):
        src = Path(entry["src"])
        if src.name.startswith("lcm-openstack"):
            # What `make ee` does: the tarball, renamed to the versionless name.
            out = run([str(BIN / "ansible-galaxy"), "collection", "build", str(ROOT),
                       "--output-path", str(work / src.parent), "--force"])
            assert out.returncode == 0, out.stderr
            (work / src.parent / f"lcm-openstack-{GALAXY['version']}.tar.gz").rename(work / src)
    out = run([str(BIN / "ansible-builder"), "create", "-f", str(work / EE_FILE.name),
               "--context", str(work / "context"), "--output-filename", "Containerfile"])
    assert out.returncode == 0, out.stdout + out.stderr
    assert "No matches" not in out.stdout + out.stderr, out.stdout + out.stderr
    return Context(work / "context")


@pytest.fixture(scope="module")
def installed(context: Context, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collections path filled the way the image's galaxy stage fills
    /usr/share/ansible/collections: lcm.openstack from the file the context's
    requirements.yml names, kubernetes.core from the virtualenv (Galaxy is
    not reachable here), once it satisfies the range asked for."""
    galaxy = context.stage("galaxy")
    assert "COPY _build /build" in galaxy and "WORKDIR /build" in galaxy
    dest = tmp_path_factory.mktemp("collections")
    reqs = yaml.safe_load((context.build / "requirements.yml").read_text())["collections"]
    for req in reqs:
        if req.get("type") == "file":
            assert req["name"].startswith("/build/"), req
            tarball = context.build / req["name"][len("/build/"):]
            assert tarball.is_file(), f"{req['name']} is not in the build context"
            out = run([str(BIN / "ansible-galaxy"), "collection", "install", str(tarball),
                       "-p", str(dest), "--no-deps", "--force"])
            assert out.returncode == 0, out.stderr
        elif req["name"] == "kubernetes.core":
            import ansible_collections.kubernetes.core as kc

            src = Path(list(kc.__path__)[0])
            version = json.loads((src / "MANIFEST.json").read_text())["collection_info"]["version"]
            assert Version(version) in SpecifierSet(req["version"]), \
                f"kubernetes.core {version} of the virtualenv is outside {req['version']}"
            shutil.copytree(src, dest / "ansible_collections/kubernetes/core")
    return dest


# -- collections --------------------------------------------------------------

def test_the_galaxy_stage_installs_the_collections_requirements_file(context: Context) -> None:
    galaxy = context.stage("galaxy")
    assert re.search(r"^RUN .*ansible-galaxy collection install .*-r requirements\.yml", galaxy, re.M)
    names = [c["name"] for c in yaml.safe_load((context.build / "requirements.yml").read_text())["collections"]]
    assert "/build/collections/lcm-openstack.tar.gz" in names, names
    assert "kubernetes.core" in names, names


def test_the_tarball_is_this_collection_at_galaxy_yml_s_version(installed: Path) -> None:
    root = installed / "ansible_collections/lcm/openstack"
    manifest = yaml.safe_load((root / "MANIFEST.json").read_text())["collection_info"]
    assert (manifest["namespace"], manifest["name"], manifest["version"]) == \
        ("lcm", "openstack", GALAXY["version"])
    for shipped in ("plugins/modules/helm_release.py", "plugins/modules/phase.py",
                    "meta/execution-environment.yml", "requirements.txt", "roles/crds"):
        assert (root / shipped).exists(), f"{shipped} is missing from the tarball"


def test_kubernetes_core_is_asked_for_in_galaxy_yml_s_range(context: Context) -> None:
    reqs = yaml.safe_load((context.build / "requirements.yml").read_text())["collections"]
    kc = [r for r in reqs if r["name"] == "kubernetes.core"]
    assert kc and kc[0].get("version") == GALAXY["dependencies"]["kubernetes.core"], kc


def test_no_file_of_the_definition_names_a_version() -> None:
    # galaxy.yml alone holds the version; the tarball's name carries none.
    for name in ("execution-environment.yml", "ee-requirements.yml"):
        assert GALAXY["version"] not in (ROOT / name).read_text(), name


def galaxy_check(context: Context) -> str:
    """The galaxy stage's check for the tarball, as the script its RUN runs."""
    galaxy = context.stage("galaxy")
    m = re.search(r"^RUN (if \[ ! -f /build/collections/(?:.*\\\n)*.*)$", galaxy, re.M)
    assert m, "the galaxy stage does not check for the collection tarball"
    assert galaxy.index(m.group(0)) < galaxy.index("ansible-galaxy collection install")
    assert galaxy.index("COPY _build /build") < galaxy.index(m.group(0))
    return m.group(1).replace("\\\n", "\n")


def test_the_image_build_stops_without_the_tarball_in_the_context(context: Context, tmp_path: Path) -> None:
    script = galaxy_check(context).replace("/build/", f"{tmp_path}/build/")
    out = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, check=False)
    assert out.returncode != 0
    assert "lcm-openstack.tar.gz is not in the build context" in out.stderr, out.stderr
    # With the context's _build copied where the stage copies it, it passes.
    shutil.copytree(context.build, tmp_path / "build")
    out = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


def test_make_ee_writes_the_context_with_the_tarball_or_fails(tmp_path: Path) -> None:
    # A definition whose tarball is missing: ansible-builder says Complete!,
    # make ee must not.
    broken = yaml.safe_load(EE_FILE.read_text())
    broken["additional_build_files"][0]["src"] = "nowhere/lcm-openstack.tar.gz"
    for name in ("requirements.txt", "ee-requirements.yml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "ee.yml").write_text(yaml.safe_dump(broken))
    ee_dir = tmp_path / "build"
    make = ["make", "--no-print-directory", "-C", str(ROOT), "-o", "venv", f"EE_DIR={ee_dir}"]
    out = run(make + ["ee", f"EE_FILE={tmp_path / 'ee.yml'}"])
    assert out.returncode != 0, out.stdout
    assert "the build context lacks the collection tarball" in out.stderr, out.stdout + out.stderr
    # The definition as it ships, its tarball where this run's make ee puts it
    # (the shipped one names build/ee/ of the checkout, which a clean clone lacks).
    good = yaml.safe_load(EE_FILE.read_text())
    good["additional_build_files"][0]["src"] = str(ee_dir / "lcm-openstack.tar.gz")
    (tmp_path / "good.yml").write_text(yaml.safe_dump(good))
    out = run(make + ["ee", f"EE_FILE={tmp_path / 'good.yml'}"])
    assert out.returncode == 0, out.stdout + out.stderr
    assert (ee_dir / "context/_build/collections/lcm-openstack.tar.gz").is_file()
    with tarfile.open(ee_dir / "context/_build/collections/lcm-openstack.tar.gz") as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
    assert manifest["collection_info"]["version"] == GALAXY["version"]


# -- Python requirements ------------------------------------------------------

def introspect(context: Context, collections: Path, out: Path) -> subprocess.CompletedProcess:
    """The builder stage's introspection, with the arguments the Containerfile gives it."""
    builder = context.stage("builder")
    m = re.search(r"^RUN \$PYCMD /output/scripts/introspect\.py introspect (.*)$", builder, re.M)
    assert m, "the builder stage does not introspect the collections"
    args = m.group(1).split()
    files = {a.split("=", 1)[1] for a in args if "=" in a and not a.startswith("--write")}
    for name in files:  # the COPY steps that bring them to /build
        assert re.search(rf"^COPY _build/{re.escape(name)} {re.escape(name)}$", builder, re.M), name
    args = [a.replace("=/tmp/src/", f"={out}/") for a in args]
    return run([sys.executable, str(context.build / "scripts/introspect.py"), "introspect",
                str(collections), *args], cwd=context.build)


def test_the_python_requirements_reach_the_image(context: Context, installed: Path, tmp_path: Path) -> None:
    out = introspect(context, installed, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = (tmp_path / "requirements.txt").read_text().splitlines()
    sources: Dict[str, set] = {}
    for line in lines:
        req, comment = (line.split("#", 1) + [""])[:2]
        sources.setdefault(str(Requirement(req)), set()).update(
            comment.replace("from collection", "").replace(",", " ").split())
    wanted = [str(Requirement(r)) for r in (ROOT / "requirements.txt").read_text().splitlines()
              if r.strip() and not r.startswith("#")]
    # Every line of requirements.txt, as written, from the definition ("user")...
    for req in wanted:
        assert "user" in sources.get(req, ()), (req, lines)
    # ...and from the installed collection's meta/execution-environment.yml,
    # less what ansible-builder leaves to ansible-core (PyYAML).
    from_collection = [req for req in wanted if "lcm.openstack" in sources.get(req, ())]
    assert from_collection, lines
    assert "RUN /output/scripts/assemble" in context.stage("builder")
    assert "RUN /output/scripts/install-from-bindep" in context.stage("final")


def test_no_system_package_outside_the_ubi_repositories_is_asked_for(
        context: Context, installed: Path, tmp_path: Path) -> None:
    out = introspect(context, installed, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    bindep = tmp_path / "bindep.txt"
    text = bindep.read_text() if bindep.exists() else ""
    assert "openshift-clients" not in text, text


def test_ansible_core_and_runner_match_requirements_dev(context: Context) -> None:
    m = re.search(r'^ARG ANSIBLE_INSTALL_REFS="([^"]*)"', context.containerfile, re.M)
    assert m, "ansible-core and ansible-runner are not installed by the definition"
    refs = {Requirement(r).name: str(Requirement(r).specifier) for r in m.group(1).split()}
    dev = {Requirement(r).name: str(Requirement(r).specifier)
           for r in (ROOT / "requirements-dev.txt").read_text().splitlines()
           if r.strip() and not r.startswith(("#", "-"))}
    for name in ("ansible-core", "ansible-runner"):
        assert refs.get(name) == dev[name], (name, refs.get(name), dev[name])


def test_an_older_ansible_core_is_one_build_argument(context: Context) -> None:
    """`make ee-image EE_CORE=...` (docs/awx.md) reaches the one pip install of
    ansible-core: the base stage, which every other stage is built from."""
    base = context.stage("base")
    assert re.search(r"^ARG ANSIBLE_INSTALL_REFS$", base, re.M), base
    assert re.search(r"^RUN .*pip install .*\$ANSIBLE_INSTALL_REFS$", base, re.M), base
    assert all(re.match(r"base\b", stage) for stage in re.findall(r"^FROM (\S+) AS (?!base)", context.containerfile, re.M))
    runner = Requirement(next(r for r in (ROOT / "requirements-dev.txt").read_text().splitlines()
                              if r.startswith("ansible-runner=="))).specifier
    out = subprocess.run(["make", "-n", "--no-print-directory", "ee-image", "EE_CORE=2.19.14"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert f'--build-arg "ANSIBLE_INSTALL_REFS=ansible-core==2.19.14 ansible-runner{runner}"' in out, out
    plain = subprocess.run(["make", "-n", "--no-print-directory", "ee-image"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout
    assert "ANSIBLE_INSTALL_REFS" not in plain, plain


# -- Helm ---------------------------------------------------------------------

def test_the_helm_pin_is_the_test_bed_s_helm_3(context: Context) -> None:
    m = re.search(r"^ARG HELM_VERSION=(\S+)$", context.stage("final"), re.M)
    assert m and m.group(1) == helm_pins()["3"], (m and m.group(1), helm_pins())


def test_the_helm_4_alternative_is_the_test_bed_s_helm_4(context: Context) -> None:
    named = set(re.findall(r"HELM_VERSION=(v4\S*)", context.containerfile))
    assert named == {helm_pins()["4"]}, (named, helm_pins())


def test_the_pinned_helm_has_a_literal_digest_per_architecture(context: Context) -> None:
    step = context.helm_step()
    v3 = helm_pins()["3"]
    for arch in ("amd64", "arm64"):
        assert re.search(rf"^\s*helm-{re.escape(v3)}-linux-{arch}\.tar\.gz\) sum=[0-9a-f]{{64}} ;;",
                         step, re.M), f"no sha256 for helm-{v3}-linux-{arch}.tar.gz"


class FakeHelmSite:
    """Stands in for get.helm.sh (a curl on PATH) and uname; runs the step."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.site = root / "site"
        self.stubs = root / "stubs"
        self.bin = root / "bin"
        self.tmp = root / "tmp"
        for d in (self.site, self.stubs, self.bin, self.tmp):
            d.mkdir()
        self._stub("curl", f"""#!/bin/sh
out=""; url=""
while [ $# -gt 0 ]; do
  case "$1" in
    -*o) out="$2"; shift 2 ;;
    -*) shift ;;
    *) url="$1"; shift ;;
  esac
done
case "$url" in https://get.helm.sh/*) ;; *) echo "curl: unexpected URL $url" >&2; exit 6 ;; esac
file="{self.site}/${{url##*/}}"
[ -f "$file" ] || {{ echo "curl: (22) 404 $url" >&2; exit 22; }}
if [ -n "$out" ]; then cp "$file" "$out"; else cat "$file"; fi
""")
        self._stub("uname", "#!/bin/sh\necho x86_64\n")

    def _stub(self, name: str, text: str) -> None:
        path = self.stubs / name
        path.write_text(text)
        path.chmod(0o755)

    def publish(self, version: str, reports: str, sha256sum: Optional[str] = "match") -> None:
        """A linux-amd64 tarball whose helm prints `reports`, and its .sha256sum."""
        name = f"helm-{version}-linux-amd64.tar.gz"
        script = f"#!/bin/sh\necho '{reports}+gdeadbee'\n".encode()
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            info = tarfile.TarInfo("linux-amd64/helm")
            info.size, info.mode = len(script), 0o755
            tar.addfile(info, io.BytesIO(script))
        (self.site / name).write_bytes(buf.getvalue())
        if sha256sum is not None:
            digest = hashlib.sha256(buf.getvalue()).hexdigest() if sha256sum == "match" else sha256sum
            (self.site / f"{name}.sha256sum").write_text(f"{digest}  {name}\n")

    def run(self, step: str, version: str) -> subprocess.CompletedProcess:
        """The step as its RUN would run it with HELM_VERSION=version."""
        script = step.replace("/tmp", str(self.tmp)).replace("/usr/local/bin/helm", f"{self.bin}/helm")
        env = {"PATH": f"{self.stubs}:{self.bin}:/usr/bin:/bin", "HELM_VERSION": version}
        return subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True,
                              env=env, check=False)


@pytest.fixture()
def site(tmp_path: Path) -> FakeHelmSite:
    return FakeHelmSite(tmp_path)


def test_helm_4_is_installed_after_its_published_checksum_matches(context: Context, site: FakeHelmSite) -> None:
    v4 = helm_pins()["4"]
    site.publish(v4, reports=v4)
    out = site.run(context.helm_step(), v4)
    assert out.returncode == 0, out.stdout + out.stderr
    helm = site.bin / "helm"
    assert os.access(helm, os.X_OK)
    assert subprocess.run([str(helm)], capture_output=True, text=True, check=True).stdout.startswith(v4 + "+")
    assert not list(site.tmp.iterdir()), "the step leaves its download behind"


def test_a_tarball_that_does_not_match_its_checksum_is_refused(context: Context, site: FakeHelmSite) -> None:
    v4 = helm_pins()["4"]
    site.publish(v4, reports=v4, sha256sum="0" * 64)
    out = site.run(context.helm_step(), v4)
    assert out.returncode != 0
    assert "did NOT match" in out.stderr, out.stderr
    assert not (site.bin / "helm").exists()


def test_a_missing_checksum_file_stops_the_build(context: Context, site: FakeHelmSite) -> None:
    v4 = helm_pins()["4"]
    site.publish(v4, reports=v4, sha256sum=None)
    out = site.run(context.helm_step(), v4)
    assert out.returncode != 0
    assert ".sha256sum" in out.stderr and ": OK" not in out.stdout, out.stdout + out.stderr
    assert not (site.bin / "helm").exists()


def test_the_pinned_helm_is_checked_against_its_literal_digest_not_the_download(
        context: Context, site: FakeHelmSite) -> None:
    # The stand-in tarball is not Helm's, though its .sha256sum agrees with
    # it: only the digest written in the definition can refuse it.
    v3 = helm_pins()["3"]
    site.publish(v3, reports=v3)
    out = site.run(context.helm_step(), v3)
    assert out.returncode != 0, "the default pin accepted a tarball that is not the release"
    assert "did NOT match" in out.stderr, out.stderr
    assert not (site.bin / "helm").exists()


def test_a_binary_of_another_version_is_refused(context: Context, site: FakeHelmSite) -> None:
    v4 = helm_pins()["4"]
    site.publish(v4, reports="v4.0.0")
    out = site.run(context.helm_step(), v4)
    assert out.returncode != 0
    assert ": OK" in out.stdout, out.stdout + out.stderr  # the checksum passed; the version did not


def test_helm_is_what_the_modules_find(context: Context) -> None:
    final = context.stage("final")
    assert re.search(r"^ENV HELM_BIN=/usr/local/bin/helm$", final, re.M)
    # Installed before the image drops root.
    assert final.index("ENV HELM_BIN") < final.index("USER 1000")
