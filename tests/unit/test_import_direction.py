"""The layering README.md describes under "What is here", enforced: a module imports only from its own layer or
below, the controller and the brokers meet only through `protocol/`, and the core never reaches the wall clock,
the event loop or the global random generator directly (that is what the `Runtime` port is for).

The checker is a plain function over a source tree so that a test can plant a wrong-way import in a copy
and watch it fail.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "zkcontroller"

LAYERS: dict[str, int] = {
    "model": 1,
    "event_schema": 1,
    "java_hash": 1,
    "scala_sets": 1,
    "java_double": 1,
    "runtime": 2,
    "protocol": 2,
    "coordination": 3,
    "zk": 4,
    "controller": 5,
    "broker": 5,
    "admin": 6,
    "cluster": 7,
    "sim": 7,
    "analytics": 7,
    "cli": 8,
    "__init__": 8,
}
FORBIDDEN_PAIRS = {
    ("controller", "broker"),
    ("broker", "controller"),
    ("protocol", "runtime"),
    ("cluster", "sim"),
    ("cluster", "analytics"),
}
"""Same-layer imports that are still wrong: the controller and brokers meet only through `protocol/`; the
real-run assembly never depends on the simulator or the analytics job."""

CORE = ("controller", "broker", "zk")
BANNED_MODULES = {"time", "threading", "uuid", "datetime"}
BANNED_CALLS = {
    ("asyncio", "create_task"),
    ("asyncio", "get_running_loop"),
    ("asyncio", "get_event_loop"),
    ("asyncio", "ensure_future"),
    ("random", "Random"),
    ("random", "SystemRandom"),
    ("random", "random"),
    ("random", "randint"),
    ("random", "choice"),
    ("random", "shuffle"),
    ("random", "getrandbits"),
}


def _package_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "zkcontroller":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _package(rel: Path) -> str:
    """The package a module at ``rel`` (relative to the ``zkcontroller`` root) is in: what its relative imports
    start from (a package's ``__init__`` is in the package itself)."""
    parts = ["zkcontroller", *rel.with_suffix("").parts]
    return ".".join(parts[:-1])


def _imports(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """Every module ``tree`` imports, relative imports resolved against ``package`` as Python resolves them
    (``from .. import x`` names ``x`` in the parent package); one reaching above the top keeps its dots, for
    the caller to refuse. ``from zkcontroller import x`` counts as importing ``zkcontroller.x``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level > 0:
                parts = package.split(".")
                if node.level > len(parts):
                    found.append((node.lineno, "." * node.level + base))
                    continue
                base = ".".join([*parts[:len(parts) - node.level + 1], *([base] if base else [])])
            if base == "zkcontroller" or not node.module:
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return found


def _clock_and_loop_uses(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name in BANNED_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module in BANNED_MODULES:
            found.append((node.lineno, f"from {node.module} import ..."))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            name = owner.id if isinstance(owner, ast.Name) else None
            if (name, node.func.attr) in BANNED_CALLS:
                found.append((node.lineno, f"{name}.{node.func.attr}()"))
            elif node.func.attr in ("create_task", "call_later", "call_at"):
                found.append((node.lineno, f".{node.func.attr}()"))
            elif (name, node.func.attr) == ("asyncio", "sleep") and not _is_zero(node):
                found.append((node.lineno, "asyncio.sleep() with a delay"))
    return found


def _is_zero(call: ast.Call) -> bool:
    return len(call.args) == 1 and isinstance(call.args[0], ast.Constant) and call.args[0].value == 0


def violations(root: Path) -> list[str]:
    """Every wrong-way import and direct clock/loop/random use under ``root`` (a ``zkcontroller`` tree)."""
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        own = rel.parts[0].removesuffix(".py")
        if own not in LAYERS:
            problems.append(f"{rel}: package {own!r} has no layer; add it to LAYERS")
            continue
        tree = ast.parse(path.read_text(), str(path))
        for lineno, module in _imports(tree, _package(rel)):
            if module.startswith("."):
                problems.append(f"{rel}:{lineno}: 'from {module} import' reaches above the zkcontroller package")
                continue
            target = _package_of(module)
            if target is None or target == own:
                continue
            if target not in LAYERS:
                problems.append(f"{rel}:{lineno}: imports {module}, which has no layer")
            elif LAYERS[target] > LAYERS[own] or (own, target) in FORBIDDEN_PAIRS:
                problems.append(f"{rel}:{lineno}: {own} (layer {LAYERS[own]}) imports {module} "
                                f"(layer {LAYERS[target]})")
        if own in CORE:
            problems += [f"{rel}:{lineno}: {what} in the core; use the Runtime port"
                         for lineno, what in _clock_and_loop_uses(tree)]
    return problems


def test_the_source_tree_respects_the_layers() -> None:
    assert violations(SRC) == []


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "zkcontroller"
    shutil.copytree(SRC, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_a_wrong_way_import_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    target = root / "zk" / "paths.py"
    target.write_text(target.read_text() + "\nfrom zkcontroller.controller.context import ControllerContext\n")
    (root / "controller" / "uses_broker.py").write_text("from zkcontroller.broker import metadata_cache\n")
    found = violations(root)
    assert any(p.startswith("zk/paths.py:") and "imports zkcontroller.controller.context" in p for p in found)
    assert any(p.startswith("controller/uses_broker.py:1:") for p in found)
    assert len(found) == 2


def test_reaching_the_wall_clock_or_loop_from_the_core_is_caught(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "broker" / "naughty.py").write_text(
        "import asyncio\nimport time\nimport random\n\n\n"
        "async def f():\n    await asyncio.sleep(1)\n    asyncio.get_running_loop().create_task(f())\n"
        "    return time.time() + random.random()\n"
    )
    found = [p for p in violations(root) if p.startswith("broker/naughty.py")]
    kinds = sorted(p.split(": ", 1)[1] for p in found)
    assert kinds == sorted([
        "import time in the core; use the Runtime port",
        "asyncio.sleep() with a delay in the core; use the Runtime port",
        "asyncio.get_running_loop() in the core; use the Runtime port",
        ".create_task() in the core; use the Runtime port",
        "random.random() in the core; use the Runtime port",
    ])


def test_a_relative_import_across_layers_is_caught(tmp_path: Path) -> None:
    root = tmp_path / "zkcontroller"
    (root / "zk" / "znodes").mkdir(parents=True)
    (root / "zk" / "znodes" / "__init__.py").write_text("from ...controller.context import ControllerContext\n")
    (root / "zk" / "relative.py").write_text(
        "from . import paths\nfrom .errors import ZnodeDecodeError\nfrom ..model import TopicPartition\n"
        "from .. import controller\nfrom ..admin import reassign\nfrom ... import outside\n")
    (root / "model.py").write_text("from .zk import paths\n")
    assert violations(root) == [
        "model.py:1: model (layer 1) imports zkcontroller.zk (layer 4)",
        "zk/relative.py:4: zk (layer 4) imports zkcontroller.controller (layer 5)",
        "zk/relative.py:5: zk (layer 4) imports zkcontroller.admin (layer 6)",
        "zk/relative.py:6: 'from ... import' reaches above the zkcontroller package",
        "zk/znodes/__init__.py:1: zk (layer 4) imports zkcontroller.controller.context (layer 5)",
    ]
