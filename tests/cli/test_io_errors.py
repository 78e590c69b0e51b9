"""Every I/O failure of refresh and export is one line and exit 1, with the run recorded where
the data directory can hold it; an export never overwrites without --force."""

from __future__ import annotations

import json


def _one_line(code: int, err: str, kind: str) -> str:
    assert code == 1, err
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"{kind}: "), err
    assert "Traceback" not in err
    return err


def test_export_refuses_to_overwrite_without_force(perfledger, tmp_path):
    out = tmp_path / "out"
    assert perfledger("export", "--out", str(out), "--format", "csv")[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    err = _one_line(*perfledger("export", "--out", str(out), "--format", "csv")[::2],
                    "ConfigError")
    assert "--force" in err and {p.name: p.read_bytes() for p in out.iterdir()} == before
    code, out_text, _ = perfledger("export", "--out", str(out), "--format", "csv", "--force")
    assert code == 0 and "exported" in out_text


def test_export_to_a_device_or_below_a_file_is_one_line(perfledger, tmp_path):
    _one_line(*perfledger("export", "--out", "/dev/full")[::2], "ConfigError")
    (tmp_path / "f").write_text("x")
    err = _one_line(*perfledger("export", "--out", str(tmp_path / "f" / "out"))[::2],
                    "ExportError")
    assert "nothing was written" in err


def test_a_report_that_cannot_be_written_is_one_line_and_the_run_is_recorded(perfledger,
                                                                            data_dir):
    err = _one_line(*perfledger("refresh", "--report", "/dev/full")[::2], "ExportError")
    assert "No space left on device" in err
    runs = sorted((data_dir / "runs").glob("*.json"))
    assert runs and json.loads(runs[-1].read_text())["id"] in err


def test_an_unwritable_data_dir_is_one_line(perfledger, tmp_path):
    (tmp_path / "file").write_text("x")
    err = _one_line(*perfledger("refresh", data=tmp_path / "file" / "var")[::2],
                    "SnapshotError")
    assert "the data directory cannot be written" in err and str(tmp_path) not in err


def test_a_lock_that_cannot_be_opened_is_one_line(perfledger, data_dir):
    (data_dir / "refresh.lock").mkdir()
    err = _one_line(*perfledger("refresh")[::2], "SnapshotError")
    assert "refresh lock (refresh.lock) cannot be opened" in err
