"""The two patches of Ray's own processes fail closed, as the HAProxy patch does (issue 49, item 4): a replica's
gRPC address is kept on loopback whatever its form, or refused; a Ray other than the one the patches were read
from (its version, or a patched line changed under the same version) makes start-up refuse with a sentence before
anything starts; Ray's single-machine switch is set around `ray.init` only. Fast: no Ray is started (`ray.init` is
replaced by one that fails the test if it is ever reached)."""
from __future__ import annotations

import os
import sys
import types

import pytest

from serve import front, local
from serve.__main__ import main
from serve.settings import ServeSettings

REFUSAL = "serve/front.py: not starting Ray unprotected: "


# Ray is imported by the tests that use it, not when the file is collected: every xdist worker collects every file,
# and importing Ray cost each ~0.9 s of its start-up. The address checks below need no Ray at all.
@pytest.fixture(scope="module")
def ray():
    pytest.importorskip("ray.serve")
    import ray

    return ray


@pytest.fixture(scope="module")
def tls_utils(ray):
    from ray._common import tls_utils

    return tls_utils


@pytest.fixture(scope="module")
def ray_constants(ray):
    from ray._private import ray_constants

    return ray_constants


@pytest.mark.parametrize("address, bound", [
    ("[::]:0", "127.0.0.1:0"),  # what Ray 2.60's replica asks for
    ("[::]:50051", "127.0.0.1:50051"),
    ("0.0.0.0:50051", "127.0.0.1:50051"),
    (":50051", "127.0.0.1:50051"),
    ("[0:0:0:0:0:0:0:0]:7", "127.0.0.1:7"),
    ("localhost:50051", "localhost:50051"),
    ("127.0.0.1:50051", "127.0.0.1:50051"),
    ("127.0.0.2:50051", "127.0.0.2:50051"),
    ("[::1]:50051", "[::1]:50051"),
    ("[::ffff:127.0.0.1]:50051", "[::ffff:127.0.0.1]:50051"),
])
def test_a_replicas_grpc_address_on_every_interface_is_bound_to_loopback_and_a_loopback_one_kept(address, bound):
    assert front.loopback_address(address) == bound


@pytest.mark.parametrize("address, why", [
    ("[2001:db8::1]:50051", "it is beyond loopback"),
    ("[fe80::1]:50051", "it is beyond loopback"),
    ("10.0.0.5:50051", "it is beyond loopback"),
    ("::1:50051", "an IPv6 address without brackets"),
    ("example.com:50051", "its host is not an IP address or localhost"),
    ("[nonsense]:50051", "its host is not an IP address or localhost"),
    ("garbage", "it is not host:port"),
    ("[::]:", "it is not host:port"),
    ("[::]:port", "it is not host:port"),
    ("0.0.0.0:70000", "it is not host:port"),
    ("", "it is not host:port"),
])
def test_any_other_grpc_address_is_refused_with_a_sentence_not_bound(address, why):
    with pytest.raises(front.RayPatchError) as refused:
        front.loopback_address(address)
    assert str(refused.value) == (f"serve/front.py: not binding a Serve replica's gRPC server to {address!r}: {why}, "
                                  "and the service is not exposed, so it listens on loopback only")


class FakeServer:
    def __init__(self):
        self.bound = []

    def add_insecure_port(self, address):
        self.bound.append(address)
        return 1234


def test_the_worker_hook_routes_the_replicas_grpc_server_through_the_rewrite(monkeypatch, tls_utils):
    import ray.serve._private.replica as replica

    monkeypatch.setattr(tls_utils, "add_port_to_grpc_server", tls_utils.add_port_to_grpc_server)  # put back after
    monkeypatch.setattr(replica, "add_port_to_grpc_server", replica.add_port_to_grpc_server)
    monkeypatch.delenv("RAY_USE_TLS", raising=False)
    front.loopback_grpc()
    server = FakeServer()
    assert replica.add_port_to_grpc_server(server, "[::]:0") == 1234  # the name the replica calls
    assert tls_utils.add_port_to_grpc_server(server, "0.0.0.0:0") == 1234
    assert server.bound == ["127.0.0.1:0", "127.0.0.1:0"]
    with pytest.raises(front.RayPatchError, match="beyond loopback"):
        replica.add_port_to_grpc_server(server, "10.0.0.5:0")
    assert server.bound == ["127.0.0.1:0", "127.0.0.1:0"]  # nothing bound for it
    front.loopback_grpc()  # a second run wraps Ray's function, not its own wrapper
    assert tls_utils.add_port_to_grpc_server.__wrapped__.__module__ == "ray._common.tls_utils"


@pytest.fixture
def no_ray_start(monkeypatch, ray):
    """ray.init fails the test if start-up reaches it; the environment is put back after."""
    def started(*args, **kwargs):
        raise AssertionError("start-up went on to ray.init")

    monkeypatch.setattr(ray, "init", started)
    before = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(before)


SETTINGS = ServeSettings(models_dir="no-models", port=1)  # never read: start-up refuses first


def test_start_up_refuses_another_ray_version_with_a_sentence(monkeypatch, no_ray_start, capsys, ray):
    monkeypatch.setattr(ray, "__version__", "2.61.0")
    environment = dict(os.environ)
    with pytest.raises(front.RayPatchError) as refused:
        local.start(SETTINGS)
    assert str(refused.value).startswith(f"{REFUSAL}Ray 2.61.0 is installed, and the patches that keep its processes "
                                         "on loopback were written for Ray 2.60.0; install that version")
    assert dict(os.environ) == environment and not ray.is_initialized()  # nothing set, nothing started
    assert main(["--port", "1", "--models", "no-models"]) == 1  # the command says it and exits
    assert capsys.readouterr().err.startswith(f"python -m serve: {REFUSAL}Ray 2.61.0 is installed")


def fake_module(tmp_path, name: str, source: str) -> types.ModuleType:
    path = tmp_path / f"{name.rsplit('.', 1)[1]}.py"
    path.write_text(source)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    return module


PATCHED = [(module, line) for module, lines in front.RAY_LINES.items() for line in lines]


@pytest.mark.parametrize("module, line", PATCHED, ids=[f"{m}: {line[:40]}" for m, line in PATCHED])
def test_start_up_refuses_a_ray_whose_patched_line_changed_under_the_same_version(monkeypatch, no_ray_start,
                                                                                   tmp_path, module, line, ray):
    source = front.ray_source(module)
    assert source.count(line) == 1  # the real Ray has it
    changed = source.replace(line, line.replace("add_port", "bind_port").replace("[::]", "0.0.0.0")
                             .replace("ENABLE_RAY_CLUSTER", "RAY_ENABLE_CLUSTER"))
    assert changed != source
    monkeypatch.setitem(sys.modules, module, fake_module(tmp_path, module, changed))
    with pytest.raises(front.RayPatchError) as refused:
        local.start(SETTINGS)
    assert str(refused.value) == (f"{REFUSAL}{module} (Ray {ray.__version__}) has 0 lines `{line}` where its patch "
                                  "expects one: Ray's code changed under the same version")
    exposed = ServeSettings(models_dir="no-models", port=1, host="0.0.0.0", expose=True)
    if module in front.GRPC_MODULES:  # an exposed service does not patch the gRPC bind, and does not check it
        with pytest.raises(AssertionError, match="went on to ray.init"):
            local.start(exposed)
    else:
        with pytest.raises(front.RayPatchError):
            local.start(exposed)


def test_the_hook_itself_refuses_another_ray_in_a_worker(monkeypatch, ray, tls_utils):
    monkeypatch.setattr(ray, "__version__", "3.0.0")
    monkeypatch.setattr(tls_utils, "add_port_to_grpc_server", tls_utils.add_port_to_grpc_server)
    original = tls_utils.add_port_to_grpc_server
    with pytest.raises(front.RayPatchError, match="Ray 3.0.0 is installed"):
        front.loopback_grpc()
    assert tls_utils.add_port_to_grpc_server is original  # nothing patched on the way


@pytest.mark.parametrize("before", [None, "1", "0"])
@pytest.mark.parametrize("expose", [False, True])
def test_rays_single_machine_switch_is_set_for_ray_init_only(monkeypatch, before, expose, ray_constants):
    name = ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR
    if before is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, before)
    constant = ray_constants.ENABLE_RAY_CLUSTER
    with local.single_machine(expose):
        assert os.environ[name] == ("1" if expose else "0") and ray_constants.ENABLE_RAY_CLUSTER is expose
    assert os.environ.get(name) == before and ray_constants.ENABLE_RAY_CLUSTER is constant
    with pytest.raises(RuntimeError), local.single_machine(expose):  # a failed ray.init puts it back too
        raise RuntimeError("ray.init failed")
    assert os.environ.get(name) == before and ray_constants.ENABLE_RAY_CLUSTER is constant
