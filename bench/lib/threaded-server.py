"""A threaded Python HTTP server in front of `carectl sandbox`: the kind of service that answers
slower as more requests arrive. Each reply is parsed and serialised again under Python's global
lock, so the work of concurrent requests queues in one process that shares the machine's CPUs.

    python3 bench/lib/threaded-server.py PORT UPSTREAM_URL

Start the sandbox with --public-url http://127.0.0.1:PORT so that its links name this server.
Prints "listening" once it accepts connections.
"""
import http.client
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

PORT = int(sys.argv[1])
UPSTREAM = urlsplit(sys.argv[2])
local = threading.local()


def fetch(path, headers):
    """The upstream reply, on this thread's keep-alive connection; once more on a new one if the sandbox closed it idle."""
    for attempt in (0, 1):
        if attempt or not hasattr(local, "connection"):
            local.connection = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port)
        try:
            local.connection.request("GET", path, headers=headers)
            reply = local.connection.getresponse()
            return reply, reply.read()
        except (http.client.RemoteDisconnected, ConnectionError):
            local.connection.close()
            if attempt:
                raise


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_GET(self):
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "accept")}
        reply, body = fetch(self.path, headers)
        if reply.getheader("content-type", "").startswith("application/json"):
            body = json.dumps(json.loads(body), separators=(",", ":")).encode()
        self.send_response(reply.status)
        for name in ("content-type", "retry-after"):
            if reply.getheader(name) is not None:
                self.send_header(name, reply.getheader(name))
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
print("listening", flush=True)
server.serve_forever()
