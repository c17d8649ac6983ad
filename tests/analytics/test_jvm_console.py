"""The JVM's "Using incubator modules" start-up warning is dropped from what the user sees; nothing else is."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from zkcontroller.analytics import job
from zkcontroller.analytics.jvm_console import INCUBATOR_WARNING, filtered_jvm_stderr

WARNING = INCUBATOR_WARNING.decode()


def _child(script: str) -> None:
    """A process started in the block, as PySpark starts the JVM: it inherits fd 2."""
    subprocess.run(["sh", "-c", script], check=True)


def test_the_warning_is_dropped_and_the_rest_passes_unchanged(capfd: pytest.CaptureFixture[str]) -> None:
    with filtered_jvm_stderr() as forwarder:
        _child(f"echo 'Spark Command: java' >&2; echo '{WARNING}' >&2; echo 'an error' >&2; "
               "printf '\\r[Stage 1:>   (0 + 1) / 2]\\r[Stage 1:=>  (1 + 1) / 2]' >&2")
    assert forwarder is not None
    forwarder.join()
    err = capfd.readouterr().err
    assert WARNING not in err
    assert err == "Spark Command: java\nan error\n\r[Stage 1:>   (0 + 1) / 2]\r[Stage 1:=>  (1 + 1) / 2]"


def test_only_the_first_warning_line_is_dropped(capfd: pytest.CaptureFixture[str]) -> None:
    """The JVM prints it once, at boot: a later identical line is someone else's and passes."""
    with filtered_jvm_stderr() as forwarder:
        _child(f"echo '{WARNING}' >&2; echo '{WARNING}' >&2")
    assert forwarder is not None
    forwarder.join()
    assert capfd.readouterr().err == WARNING + "\n"


def test_output_from_after_the_block_passes_too(capfd: pytest.CaptureFixture[str]) -> None:
    """The JVM keeps the pipe as its stderr for its whole life: what it writes later still arrives."""
    with filtered_jvm_stderr() as forwarder:
        child = subprocess.Popen(["sh", "-c", f"echo '{WARNING}' >&2; read line; echo later >&2"],
                                 stdin=subprocess.PIPE)
    child.communicate(b"go\n")  # the second line is written after the block has ended
    assert forwarder is not None
    forwarder.join()
    assert capfd.readouterr().err == "later\n"


def test_this_process_writes_to_the_real_stderr_after_the_block(capfd: pytest.CaptureFixture[str]) -> None:
    with filtered_jvm_stderr() as forwarder:
        pass
    assert forwarder is not None
    forwarder.join()  # no child holds the pipe: the thread ends at once
    _child("echo after >&2")
    assert capfd.readouterr().err == "after\n"


def test_build_session_starts_spark_inside_the_filter(monkeypatch: pytest.MonkeyPatch,
                                                      capfd: pytest.CaptureFixture[str]) -> None:
    """Where the JVM is launched (the builder's getOrCreate), fd 2 is the filter's pipe."""
    from pyspark.sql import SparkSession

    class Session:
        sparkContext = type("Context", (), {"setLogLevel": lambda self, level: None})()

    def get_or_create(_builder: object) -> Session:
        _child(f"echo '{WARNING}' >&2; echo 'kept' >&2")
        return Session()

    for name in ("PYSPARK_PYTHON", "SPARK_LOCAL_IP"):  # build_session sets them unless set: restored after
        monkeypatch.setenv(name, os.environ.get(name, ""))
    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", get_or_create)
    job.build_session("local[1]", parser="python")
    for thread in threading.enumerate():
        if thread.name == "jvm-stderr":
            thread.join()
    assert capfd.readouterr().err == "kept\n"


def test_a_process_without_stderr_starts_spark_unfiltered() -> None:
    """fd 2 closed (some daemons): nothing to filter, and no error where Spark would start."""
    program = ("import os, sys\nos.close(2)\nfrom zkcontroller.analytics.jvm_console import filtered_jvm_stderr\n"
               "with filtered_jvm_stderr() as forwarder:\n    print(forwarder)\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert done.stdout == "None\n"
