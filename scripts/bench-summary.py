"""Summarises `aqueduct bench --json` reports: every *.json in a folder, its key rows (median wall
and host CPU ns per operation), into summary.json there and one line per report on stdout.
Used by scripts/peer-rounds.sh on the device machine."""
import json, sys, glob, os
out = sys.argv[1]
rows = ["edge/submit/512", "batch/edge/512", "batch/dispatch/512", "dispatch/submit/bindings=4", "cb/record/512",
        "cb/record/1", "cb/dynamic_extra/512", "edge/e2e/2048", "scale/queues=1", "scale/queues=2", "scale/queues=4",
        "scale/queues=8",
        "clip/c1d16", "clip/c2d16", "clip/c4d16", "clip/c8d16"]
def load(path):
    try:
        return {r["name"]: r for r in json.load(open(path))["results"]}
    except Exception as error:
        return {"error": str(error)}
summary = {}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    name = os.path.basename(path)[:-5]
    data = load(path)
    summary[name] = {row: {k: round(v, 1) if isinstance(v, float) else v for k, v in data[row].items() if k in ("median", "p90", "host_cpu_median", "submit_cpu_median", "note")} for row in rows if row in data}
    for row in list(data):
        if row.startswith("clip/") and row not in rows:
            # Schema 2 rows carry every repetition (`samples`): the summary keeps the statistics.
            summary[name][row] = {k: data[row][k] for k in data[row] if k not in ("name", "samples")}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
for name, data in summary.items():
    print(name, " ".join(f"{row.split('/')[0][:5]}/{row.split('/',1)[1]}={vals.get('host_cpu_median')}/{vals.get('median')}" for row, vals in data.items()))
