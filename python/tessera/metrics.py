"""Reading the JSON-lines metrics log that training writes (``metrics=``, ``--metrics``).

Each line is one record with an "event": "start" (the run: model, layers, data, ranks),
"train" (a logging window: step, loss, lr, samples_per_s, ...), "validation" (step, loss and
the chosen metrics), "plan", "profile", "tournament", "population" and "end"; docs/report.md
("The metrics log it reads") describes them.
"""

import json

from .errors import IoError


class MetricsLog:
    """The records of one metrics log, in order (`records`), with the common views:
    `start` and `end` (the records of those events, or None), and `train`, `validation`
    (lists of their records)."""

    def __init__(self, records, path=None):
        self.path = path
        self.records = records

    def events(self, name):
        """The records whose "event" is `name`, in order."""
        return [r for r in self.records if r.get("event") == name]

    @property
    def start(self):
        found = self.events("start")
        return found[0] if found else None

    @property
    def end(self):
        found = self.events("end")
        return found[-1] if found else None

    @property
    def train(self):
        return self.events("train")

    @property
    def validation(self):
        return self.events("validation")

    def series(self, event, key):
        """(steps, values) of `key` over the records of `event`, for plotting:
        ``steps, loss = log.series("train", "loss")``."""
        rows = [r for r in self.events(event) if key in r]
        return [r.get("step") for r in rows], [r[key] for r in rows]

    def __len__(self):
        return len(self.records)

    def __repr__(self):
        return f"MetricsLog({self.path!r}, {len(self.records)} records)"


def read_metrics(path):
    """The metrics log at `path` as a :class:`MetricsLog`. A log cut short by a killed run is
    read up to its last whole line; a line that is not JSON elsewhere raises IoError naming
    the file and the line."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise IoError(f"{path}: cannot read the metrics log: {e.strerror}") from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError as e:
            last = all(not rest.strip() for rest in lines[number:])
            if last:
                break  # the run was killed while writing its last record
            raise IoError(f"{path}: line {number} is not a JSON record: {e}") from None
    return MetricsLog(records, path)
