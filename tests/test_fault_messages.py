"""Smaller faults with their own answers: a missing shared file is the input's mistake,
a full disk says ENOSPC and where, a params directory that takes no files is found before
a key setup, and a producer never reads a worker's absolute paths."""

from __future__ import annotations

import errno
from pathlib import Path

import numpy as np
import pytest

from config.settings import load_settings
from snark.job_input import resolve_shared
from snark.keys import ParamsDirError, _save_array, check_params_dir
from snark.snarkjs.job import CircomJob, CircomJobError, WitnessRef, read_witness
from workers.failures import Failure, classify, describe, without_worker_paths


def test_a_missing_witness_file_is_permanent_and_named_as_the_job_names_it(tmp_path, rng):
    """Before: FileNotFoundError, an OSError, so transient: tried 4 times (14 s)."""
    name = f"w{rng.randrange(10**6)}.wtns"
    job = CircomJob("ab" * 16, (WitnessRef(path=name),))
    with pytest.raises(CircomJobError) as caught:
        read_witness(job, 0, tmp_path)
    assert classify(caught.value) is Failure.PERMANENT
    assert str(caught.value) == f"witnesses[0].path: no file {name!r} in the witness directory"
    assert str(tmp_path) not in str(caught.value)


def test_a_shared_path_to_a_directory_is_no_file(tmp_path):
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match="no file 'sub'"):
        resolve_shared(tmp_path, "sub", "path", ValueError)


def test_a_full_disk_names_enospc_and_the_file(tmp_path):
    """Before: "setup: 29203 requested and 14832 written" (numpy's short write), or an
    ENOSPC naming no file."""
    target = tmp_path / "circuit" / "a_g1.npy"
    target.parent.mkdir()
    target.symlink_to("/dev/full")  # a disk with no space left
    with pytest.raises(OSError) as caught:
        _save_array(target, np.zeros(1 << 16))
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(target)
    assert describe(caught.value) == ("OSError: [ENOSPC] No space left on device: "
                                      "…/circuit/a_g1.npy")


def test_a_params_dir_that_takes_no_files_is_found_before_a_setup(tmp_path):
    """Before: found only when the finished key was written, minutes later (the submit
    task and ``proofq setup`` check first now)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ParamsDirError, match=r"PROOFQ_PARAMS_DIR\) takes no files .*ENOTDIR"):
        check_params_dir(blocker / "params")
    check_params_dir(tmp_path / "params")  # made, and writable
    assert [p.name for p in (tmp_path / "params").iterdir()] == []


@pytest.mark.parametrize("text, shown", [
    ("No such file or directory: '/var/lib/proofq/witnesses/a/b.wtns'",
     "No such file or directory: '…/a/b.wtns'"),
    ("key /home/ops/.cache/proofq/params/porep-2KiB-k1 is damaged",
     "key …/params/porep-2KiB-k1 is damaged"),
    ("relative a/b/c and /tmp/x stay", "relative a/b/c and /tmp/x stay"),
])
def test_producers_are_not_shown_workers_absolute_paths(text, shown):
    assert without_worker_paths(text) == shown


def test_a_job_error_from_an_oserror_keeps_its_errno_and_loses_the_mount():
    exc = FileNotFoundError(errno.ENOENT, "No such file or directory",
                            "/mnt/shared/witnesses/job7/w3.wtns")
    assert describe(exc) == ("FileNotFoundError: [ENOENT] No such file or directory: "
                             "…/job7/w3.wtns")


def test_a_job_error_names_files_relative_to_their_directory_setting(tmp_path):
    """Before: a params dir of two components (``/srv/params``) was shown whole, and a
    longer one as ``…/params/<file>``: the worker's mount, not the setting to look in."""
    params, witnesses = tmp_path / "params", Path("/srv/w")
    settings = load_settings(params_dir=params, witness_dir=witnesses)
    text = (f"key {params}/porep-2KiB-k1 is damaged; no file '{witnesses}/job7/w3.wtns'; "
            f"not in {params}; /srv/wx stays apart")
    assert without_worker_paths(text, settings) == (
        "key $PROOFQ_PARAMS_DIR/porep-2KiB-k1 is damaged; no file "
        "'$PROOFQ_WITNESS_DIR/job7/w3.wtns'; not in $PROOFQ_PARAMS_DIR; /srv/wx stays apart")
