"""`trainwire export tensorboard` read back with TensorBoard's own EventAccumulator."""

from __future__ import annotations

import threading
from pathlib import Path

from support import export_streams
from support.cli_process import trainwire
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import api_pb2, metadata
from tensorboard.summary.writer.event_file_writer import _AsyncWriterThread

from trainwire.cli import main
from trainwire.contract.clock import parse_timestamp_us
from trainwire.export.tensorboard import run_directory, trial_directory


def export(run_dir: Path, logdir: Path) -> int:
    return main(["export", "tensorboard", str(run_dir), "--logdir", str(logdir)])


def accumulated(logdir: Path, run_id: str) -> EventAccumulator:
    accumulator = EventAccumulator(str(run_directory(logdir, run_id)), size_guidance={"scalars": 0, "tensors": 0})
    accumulator.Reload()
    return accumulator


def scalars(accumulator: EventAccumulator, tag: str) -> list[tuple[int, float]]:
    return [(event.step, round(event.value, 6)) for event in accumulator.Scalars(tag)]


def test_steps_after_a_restart_replace_the_old_ones(tmp_path: Path) -> None:
    run_id = export_streams.whole_run(tmp_path / "run")
    assert export(tmp_path / "run", tmp_path / "tb") == 0

    board = accumulated(tmp_path / "tb", run_id)
    # the first attempt's steps 3 and 4 are gone: the second attempt's took their place
    assert scalars(board, "train/loss") == [(1, 1.0), (2, 0.5), (3, 3.333333), (4, 2.5), (5, 2.0), (6, 1.666667)]
    assert scalars(board, "train/learning_rate") == [
        (1, 0.001),
        (2, 0.001),
        (3, 0.0005),
        (4, 0.0005),
        (5, 0.0005),
        (6, 0.0005),
    ]
    assert scalars(board, "train/accuracy") == [(1, 0.1), (2, 0.2)]
    assert scalars(board, "eval/loss") == [(2, 0.7), (6, 0.4)]
    first_ts = (
        (tmp_path / "run" / "progress.jsonl").read_text().split('"event":"train.step"')[0].rsplit('"ts":"', 1)[1][:27]
    )
    assert board.Scalars("train/loss")[0].wall_time == parse_timestamp_us(first_ts) / 1_000_000
    texts = {tag: board.Tensors(tag)[-1].tensor_proto.string_val[0].decode() for tag in board.Tags()["tensors"]}
    assert set(texts) == {"config", "provenance", "notes"}
    assert texts["notes"] == export_streams.NOTES
    # the notes as they were at the start (the writer's own template) and at the end, at its step
    assert [event.step for event in board.Tensors("notes")] == [0, 6]
    assert scalars(board, "epoch/loss") == [(6, 0.4)]
    assert scalars(board, "final/loss") == [(6, 1.5)]
    assert '"lr": 0.001' in texts["config"] and '"api_token": "<redacted>"' in texts["config"]
    assert export_streams.PROVENANCE["git_sha"] in texts["provenance"]


def test_exporting_again_adds_only_what_is_new(tmp_path: Path) -> None:
    run = export_streams.start(tmp_path / "run")
    export_streams.first_attempt(run)
    assert export(tmp_path / "run", tmp_path / "tb") == 0
    files_after_first = sorted(run_directory(tmp_path / "tb", run.run_id).iterdir())
    assert export(tmp_path / "run", tmp_path / "tb") == 0  # nothing new: no new file either
    assert sorted(run_directory(tmp_path / "tb", run.run_id).iterdir()) == files_after_first

    export_streams.second_attempt(run, until=8)
    export_streams.end_interrupted(run, until=8)
    assert export(tmp_path / "run", tmp_path / "tb") == 0
    assert export(tmp_path / "run", tmp_path / "tb") == 0
    board = accumulated(tmp_path / "tb", run.run_id)
    assert [step for step, _ in scalars(board, "train/loss")] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert scalars(board, "train/loss")[2] == (3, 3.333333)  # the second attempt's
    assert [step for step, _ in scalars(board, "eval/loss")] == [2, 8]
    assert len({event.step for event in board.Scalars("train/loss")}) == 8


def test_each_run_of_a_stream_gets_its_own_directory(tmp_path: Path) -> None:
    first = export_streams.whole_run(tmp_path / "run")
    second = export_streams.whole_run(tmp_path / "run")  # a second run appended to the same file
    assert export(tmp_path / "run", tmp_path / "tb") == 0
    for run_id in (first, second):
        assert [step for step, _ in scalars(accumulated(tmp_path / "tb", run_id), "train/loss")] == [1, 2, 3, 4, 5, 6]


def test_a_stream_replaced_since_the_last_export_is_refused(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    export_streams.whole_run(tmp_path / "run")
    assert export(tmp_path / "run", tmp_path / "tb") == 0
    (tmp_path / "run" / "progress.jsonl").write_text("")
    assert export(tmp_path / "run", tmp_path / "tb") == 1
    assert "remove the export cursor" in capsys.readouterr().err


def test_a_searchs_trials_are_sessions_of_the_hparams_view(tmp_path: Path) -> None:
    trainwire_id = export_streams.search_run(tmp_path / "run")
    assert export(tmp_path / "run", tmp_path / "tb") == 0

    sessions = {}
    for trial in (1, 2):
        accumulator = EventAccumulator(
            str(trial_directory(tmp_path / "tb", trainwire_id, trial)), size_guidance={"scalars": 0, "tensors": 0}
        )
        accumulator.Reload()
        content = accumulator.PluginTagToContent(metadata.PLUGIN_NAME)
        start = metadata.parse_session_start_info_plugin_data(content[metadata.SESSION_START_INFO_TAG])
        end = metadata.parse_session_end_info_plugin_data(content[metadata.SESSION_END_INFO_TAG])
        params = {
            name: value.WhichOneof("kind") and getattr(value, value.WhichOneof("kind"))
            for name, value in start.hparams.items()
        }
        sessions[trial] = (params, end.status, scalars(accumulator, "train/loss"))
        if trial == 1:
            assert scalars(accumulator, "trial/objective") == [(0, 0.4)]
            assert scalars(accumulator, "eval/loss") == [(2, 0.4)]
    assert sessions == {
        1: ({"lr": 0.01, "optimizer": "sgd"}, api_pb2.STATUS_SUCCESS, [(1, 1.0), (2, 0.5)]),
        2: ({"lr": 0.1, "optimizer": "adam"}, api_pb2.STATUS_UNKNOWN, [(1, 2.0)]),
    }
    parent = accumulated(tmp_path / "tb", trainwire_id)
    assert "train/loss" not in parent.Tags()["scalars"]  # the trials' steps are theirs


def writer_threads() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if isinstance(thread, _AsyncWriterThread)}


def test_an_export_leaves_no_event_file_open_the_restarted_attempts_included(tmp_path: Path) -> None:
    # a writer's last events are written by its daemon thread: one left open loses them at exit
    # (here the restart's session start, so the old attempt's steps 3 and 4 came back)
    export_streams.whole_run(tmp_path / "run")
    before = writer_threads()
    assert export(tmp_path / "run", tmp_path / "tb") == 0
    assert writer_threads() - before == set()


def test_an_export_says_which_lines_it_skipped_and_exports_the_rest(tmp_path: Path) -> None:
    run_id = export_streams.whole_run(tmp_path / "run")
    stream = tmp_path / "run" / "progress.jsonl"
    lines = stream.read_bytes().splitlines(keepends=True)
    stream.write_bytes(b"".join([*lines[:3], b"not json\n", *lines[3:5], b'{"event": 5}\n', *lines[5:]]))

    done = trainwire("export", "tensorboard", str(stream), "--logdir", str(tmp_path / "tb"))
    assert done.returncode == 1
    exported, skipped = done.stderr.splitlines()
    assert exported == f"exported {len(lines)} event(s) from {stream}"
    assert skipped.startswith(
        f"trainwire: error: export: {stream}: 2 invalid line(s) skipped (first: line 4, invalid_json"
    )
    # every valid line made it: the same curve as without the bad lines
    board = accumulated(tmp_path / "tb", run_id)
    assert [step for step, _ in scalars(board, "train/loss")] == [1, 2, 3, 4, 5, 6]

    again = trainwire("export", "tensorboard", str(stream), "--logdir", str(tmp_path / "tb"))
    assert (again.returncode, again.stderr) == (0, f"exported 0 event(s) from {stream}\n")


def test_every_logged_step_arrives_once_the_throttled_ones_too(tmp_path: Path) -> None:
    run_id = export_streams.readme_run(tmp_path / "run")
    assert export(tmp_path / "run", tmp_path / "tb") == 0
    files = sorted(run_directory(tmp_path / "tb", run_id).iterdir())
    assert export(tmp_path / "run", tmp_path / "tb") == 0  # nothing new: no new file
    assert sorted(run_directory(tmp_path / "tb", run_id).iterdir()) == files
    board = accumulated(tmp_path / "tb", run_id)
    assert scalars(board, "train/loss") == export_streams.README_LOSSES


def test_a_runs_name_and_tags_are_a_text_beside_its_config(tmp_path: Path) -> None:
    trainwire_id = export_streams.search_run(tmp_path / "run")
    assert export(tmp_path / "run", tmp_path / "tb") == 0
    board = accumulated(tmp_path / "tb", trainwire_id)
    (text,) = board.Tensors("name")
    assert text.tensor_proto.string_val[0].decode() == f"{export_streams.SEARCH_NAME}\n\ntags: baseline, fp16"
