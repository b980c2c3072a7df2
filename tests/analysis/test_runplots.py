"""run.html's charts read as a person expects: time in hours, one colour per job, whole queue ticks."""

from __future__ import annotations

import pandas as pd

from paretosched.analysis import runplots
from paretosched.sim.readers.platform import load_platform


def test_gantt_colours_jobs_not_cores_and_counts_hours():
    platform = load_platform("two-socket")
    jobs = [{"job_id": 1, "core_ids": "0 1", "start_s": 0.0, "end_s": 7200.0},
            {"job_id": 2, "core_ids": "2", "start_s": 3600.0, "end_s": 5400.0}]
    fig, note = runplots.gantt(platform, jobs)
    bar = fig.data[0]
    colours = list(bar.marker.color)
    assert colours[0] == colours[1] != colours[2]  # a job's cores share its colour; the next job differs
    assert list(bar.base) == [0.0, 0.0, 1.0] and list(bar.x) == [2.0, 2.0, 0.5]  # hours
    assert fig.layout.xaxis.title.text == "time (h)" and note == ""


def test_queue_axis_counts_whole_jobs_from_zero():
    tl = pd.DataFrame({"t_start_s": [0.0, 3600.0], "t_end_s": [3600.0, 7200.0], "cores_p0": [1, 2],
                       "cores_p1": [0, 0], "queue_len": [0, 3], "power_w": [5.0, 7.0]})
    fig = runplots.utilisation_queue(tl, 4)
    # the last interval is drawn to its end: a step line ends at t_end_s, not at the last t_start_s
    assert list(fig.data[1].x) == [0.0, 1.0, 2.0] and list(fig.data[1].y) == [0, 3, 3]
    assert list(runplots.power(tl).data[0].x) == [0.0, 1.0, 2.0]
    y2 = fig.layout.yaxis2
    assert y2.tick0 == 0 and y2.dtick == 1 and y2.range[0] == 0 and y2.tickformat == "d"
    assert runplots.count_ticks(80)["dtick"] == 14  # whole ticks for a long queue too
