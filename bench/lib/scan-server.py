"""A conversation list written from the spec alone (not from the sandbox), as a busy service serves it: a threaded
Python server that holds its own records and filters them itself under the global lock, on the machine's CPUs.
Its sort date index has one side: a page seeks to its lower bound, then scans in date order, testing each record
against the filters and the upper bound, until the page is full; an upper bound does not stop the scan (the spec
allows it; an unindexed bound does this), so the partly filled last page of a date-bounded query scans to the end.

    python3 bench/lib/scan-server.py PORT RECORDS [DELAY_MS] [--public-url URL] [--until DATE|now] [--span-days N]
                                     [--bunched SHARE:DAYS] [--bandwidth BYTES_PER_S]

Each reply waits DELAY_MS before it is built. Records are dated over the --span-days (365) before --until (2026-01-01),
SHARE of them (0.9:3) in its last DAYS. --bandwidth paces every reply's bytes through one link they all share.
Links name --public-url (a front such as nginx). GET /bench/requests answers the conversation lists served so far.
Prints "listening" once it accepts connections. Any credentials are accepted.
"""
import argparse
import json
import random
import threading
import time
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

options = argparse.ArgumentParser()
options.add_argument("port", type=int)
options.add_argument("records", type=int)
options.add_argument("delay_ms", type=float, nargs="?", default=0.0)
options.add_argument("--public-url")
options.add_argument("--until", default="2026-01-01")
options.add_argument("--span-days", type=int, default=365)
options.add_argument("--bunched", default="0:0")
options.add_argument("--bandwidth", type=float)
args = options.parse_args()
PORT, COUNT, DELAY = args.port, args.records, args.delay_ms / 1000
BASE = args.public_url or f"http://127.0.0.1:{PORT}"
STATUSES = ["unread", "assigned", "closed"]
rng = random.Random(46)
end = datetime.utcnow().replace(microsecond=0) if args.until == "now" else datetime.fromisoformat(args.until)
share, days = (float(x) for x in args.bunched.split(":"))
bunched = int(COUNT * share)
start = end - timedelta(days=args.span_days)
dates = sorted(
    [start + timedelta(seconds=rng.randrange(args.span_days * 86400)) for _ in range(COUNT - bunched)]
    + [end - timedelta(seconds=1 + rng.randrange(int(days * 86400))) for _ in range(bunched)]
)
RECORDS = [
    {"id": str(100000 + i), "status": rng.choice(STATUSES), "is_priority": rng.random() < 0.2, "oldest_sort_date": d.isoformat()}
    for i, d in enumerate(dates)
]
KEYS = [r["oldest_sort_date"] for r in RECORDS]


def day_after(text):
    return (datetime.fromisoformat(text[:10]) + timedelta(days=1)).date().isoformat()


def bounds(params):
    """The lower bound as the least date text kept, the upper as a test."""
    low, tests = "", []
    for key, value in params:
        if not key.startswith("oldest_sort_date_"):
            continue
        op, date_only = key.rsplit("_", 1)[1], len(value) == 10
        if op == "gte":
            low = max(low, value)
        elif op == "gt":
            low = max(low, day_after(value) if date_only else value + "\x00")
        elif op == "lt":
            tests.append(lambda s, v=value: s < v)
        elif op == "lte":
            tests.append((lambda s, v=day_after(value): s < v) if date_only else (lambda s, v=value: s <= v))
    return low, tests


def lower_index(low):
    lo, hi = 0, len(KEYS)
    while lo < hi:
        mid = (lo + hi) // 2
        if KEYS[mid] < low:
            lo = mid + 1
        else:
            hi = mid
    return lo


def page(params, base):
    size = min(50, int(dict(params).get("page_size", 50)))
    skip = int(dict(params).get("skip", 0))
    filters = [(k, v) for k, v in params if k in ("is_priority", "status")]
    low, tests = bounds(params)
    out, matched = [], 0
    for r in RECORDS[lower_index(low):]:
        if all(str(r[k]).lower() == v for k, v in filters) and all(t(r["oldest_sort_date"]) for t in tests):
            matched += 1
            if matched > skip:
                out.append(r)
                if len(out) == size:
                    break
    records = [{"id": r["id"], "url": f"{base}/v1.3/conversations/{r['id']}", **r} for r in out]
    next_page = None
    if len(out) == size:
        last = out[-1]["oldest_sort_date"]
        at_last = sum(1 for r in out if r["oldest_sort_date"] == last)
        kept = [(k, v) for k, v in params if k not in ("skip", "sort") and not (k == "oldest_sort_date_gte" and v == low)]
        kept = [(k, v) for k, v in kept if not k.startswith("oldest_sort_date_g")]
        next_page = f"{base}/v1.3/conversations?" + urlencode(kept + [("oldest_sort_date_gte", last), ("skip", at_last), ("sort", "oldest_sort_date")])
    return {"conversations": records, "paging": {"next_page": next_page, "prev_page": None}}


class Link:
    """One link every reply shares: bytes leave no faster than its rate, in 16 KiB slices (as the sandbox's --bandwidth)."""

    def __init__(self, bytes_per_second):
        self.rate, self.free_at, self.lock = bytes_per_second, 0.0, threading.Lock()

    def send(self, out, data):
        for at in range(0, len(data), 16384):
            part = data[at : at + 16384]
            with self.lock:
                now = time.monotonic()
                self.free_at = max(now, self.free_at) + len(part) / self.rate
                wait = self.free_at - now
            time.sleep(wait)
            out.write(part)


link = Link(args.bandwidth) if args.bandwidth else None
served = {"lists": 0}
counting = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_GET(self):
        parts = urlsplit(self.path)
        params = parse_qsl(parts.query)
        send = self.wfile.write
        if parts.path == "/bench/requests":
            status, body = 200, json.dumps({"requests": served["lists"]}).encode()
        elif parts.path.rstrip("/").endswith("/conversations") and any(k in ("is_priority", "status") for k, _ in params):
            with counting:
                served["lists"] += 1
            if DELAY:
                time.sleep(DELAY)
            status, body = 200, json.dumps(page(params, BASE), separators=(",", ":")).encode()
            if link:
                send = lambda data: link.send(self.wfile, data)
        else:
            status, body = 404, b'{"status":"error","message":"not found"}'
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        send(body)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
print("listening", flush=True)
server.serve_forever()
