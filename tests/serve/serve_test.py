#!/usr/bin/python3
"""serve_test.py HWINFER MODEL -- `hwinfer serve` over loopback, driven by Python's standard library
(SSE parsed chunk by chunk), curl and prometheus_client's parser: every endpoint, streamed and
whole, the tiny text model's greedy text (llama.cpp's, tests/data/text/README.md), stop strings,
64 concurrent streams of which some disconnect mid-stream, /metrics against the requests sent,
every kind of malformed request, a full queue (503 + Retry-After) and a SIGTERM drain (exit 0).
Each server is started on a free port and stopped by the test, every wait is bounded."""

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest

from prometheus_client.parser import text_string_to_metric_families

HWINFER, MODEL = sys.argv[1], sys.argv[2]
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_CONFIG = os.path.join(SOURCE_DIR, "tests/cli/data/bench-text.yaml")
SHAREGPT = os.path.join(SOURCE_DIR, "tests/data/datasets/sharegpt-sample.json")
PROMPT = "The capital of France is"
# llama.cpp's greedy continuation of PROMPT (16 tokens) on this model.
TEXT_16 = "co品 Willvirtual✅Down способ equalitymarket screensiała біль fic povnoneine"


class Server:
    """One `hwinfer serve` process on a free port; its stderr is kept for failure messages."""

    def __init__(self, *extra, model_args=None, device_args=None):
        model_args = ["-m", MODEL] if model_args is None else model_args
        device_args = ["--backend", "cpu"] if device_args is None else device_args
        self.proc = subprocess.Popen(
            [HWINFER, "serve", *model_args, "--port", "0", *device_args, *extra],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.log = []
        deadline = time.time() + 60
        self.port = None
        while self.port is None and time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.log.append(line)
            found = re.search(r"http://127\.0\.0\.1:(\d+)", line)
            if found:
                self.port = int(found.group(1))
        if self.port is None:
            self.proc.kill()
            raise RuntimeError("hwinfer serve did not start:\n" + "".join(self.log))
        self._reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._reader.start()

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def connection(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None):
        conn = self.connection()
        data = None if body is None else (body if isinstance(body, (str, bytes)) else json.dumps(body))
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        payload = response.read()
        conn.close()
        return response.status, dict(response.getheaders()), payload

    def post_json(self, path, body):
        status, headers, payload = self.request("POST", path, body)
        return status, headers, json.loads(payload) if payload else None

    def stream(self, path, body, stop_after=None):
        """POSTs a streamed request; returns the parsed data events (and "[DONE]"). With
        |stop_after| = n, closes the connection after n events (a client that goes away)."""
        conn = self.connection()
        conn.request("POST", path, body=json.dumps(dict(body, stream=True)),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200, (response.status, response.read())
        assert response.getheader("Content-Type").startswith("text/event-stream")
        events = []
        for raw in response:
            line = raw.decode("utf-8").rstrip("\n")
            if not line:
                continue
            assert line.startswith("data: "), line
            data = line[len("data: "):]
            events.append("[DONE]" if data == "[DONE]" else json.loads(data))
            if stop_after is not None and len(events) >= stop_after:
                conn.sock.close()
                conn.close()
                return events
            if data == "[DONE]":
                break
        conn.close()
        return events

    def metrics(self):
        status, headers, payload = self.request("GET", "/metrics")
        assert status == 200 and headers["Content-Type"].startswith("text/plain")
        samples = {}
        for family in text_string_to_metric_families(payload.decode()):
            for sample in family.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items())
                                  if k != "model_name")
                samples[sample.name + ("{" + labels + "}" if labels else "")] = sample.value
        return samples

    def stop(self, sig=signal.SIGTERM, timeout=60):
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        self.proc.stderr.close()
        return code


def completion(max_tokens=16, **extra):
    return dict({"prompt": PROMPT, "max_tokens": max_tokens, "temperature": 0,
                 "ignore_eos": True}, **extra)


class ServeTest(unittest.TestCase):
    server = None

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--chat-template", "llama2", "--served-model-name", "tiny",
                            "--hardware", os.path.join(SOURCE_DIR, "configs/hardware/generic-cpu.yaml"))

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        if code != 0:
            raise AssertionError(f"hwinfer serve exited {code}:\n" + "".join(cls.server.log))

    def test_health_and_models(self):
        status, _, _ = self.server.request("GET", "/health")
        self.assertEqual(status, 200)
        status, _, payload = self.server.request("GET", "/v1/models")
        models = json.loads(payload)
        self.assertEqual(status, 200)
        self.assertEqual(models["object"], "list")
        self.assertEqual(models["data"][0]["id"], "tiny")
        self.assertEqual(models["data"][0]["max_model_len"], 512)

    def test_completion_whole_and_streamed_give_llama_cpps_text(self):
        status, _, body = self.server.post_json("/v1/completions", completion(model="tiny"))
        self.assertEqual(status, 200, body)
        self.assertEqual(body["object"], "text_completion")
        self.assertEqual(body["choices"][0]["text"], TEXT_16)
        self.assertEqual(body["choices"][0]["finish_reason"], "length")
        self.assertEqual(body["usage"], {"prompt_tokens": 6, "completion_tokens": 16,
                                         "total_tokens": 22})
        events = self.server.stream("/v1/completions",
                                    completion(stream_options={"include_usage": True}))
        self.assertEqual(events[-1], "[DONE]")
        usage = events[-2]
        self.assertEqual(usage["choices"], [])
        self.assertEqual(usage["usage"]["completion_tokens"], 16)
        chunks = events[:-2]
        self.assertEqual(len(chunks), 16)  # one chunk per token, as vLLM streams
        self.assertEqual("".join(c["choices"][0]["text"] for c in chunks), TEXT_16)
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], "length")
        self.assertTrue(all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1]))

    def test_stop_string_ends_the_text_before_it(self):
        status, _, body = self.server.post_json("/v1/completions", completion(stop=["Will"]))
        self.assertEqual(status, 200, body)
        self.assertEqual(body["choices"][0]["text"], TEXT_16[:TEXT_16.index("Will")])
        self.assertEqual(body["choices"][0]["finish_reason"], "stop")
        stops = 0
        for _ in range(300):  # the engine ends the request on its next loop
            stops = self.server.metrics()["vllm:request_success_total{finished_reason=stop}"]
            if stops >= 1:
                break
            time.sleep(0.1)
        self.assertEqual(stops, 1)

    def test_chat_whole_and_streamed(self):
        chat = {"messages": [{"role": "system", "content": "Be brief."},
                             {"role": "user", "content": "Hello"}],
                "max_tokens": 8, "temperature": 0, "ignore_eos": True}
        status, _, body = self.server.post_json("/v1/chat/completions", chat)
        self.assertEqual(status, 200, body)
        self.assertEqual(body["object"], "chat.completion")
        self.assertEqual(body["choices"][0]["message"]["role"], "assistant")
        text = body["choices"][0]["message"]["content"]
        self.assertEqual(body["usage"]["completion_tokens"], 8)
        events = self.server.stream("/v1/chat/completions", chat)
        self.assertEqual(events[0]["choices"][0]["delta"]["role"], "assistant")
        self.assertEqual(events[-1], "[DONE]")
        streamed = "".join(e["choices"][0]["delta"].get("content", "") for e in events[:-1])
        self.assertEqual(streamed, text)
        self.assertEqual(events[-2]["choices"][0]["finish_reason"], "length")
        status, _, body = self.server.post_json(
            "/v1/chat/completions", {"messages": [{"role": "system", "content": "x"}]})
        self.assertEqual(status, 400, body)

    def test_curl_reaches_every_endpoint(self):
        base = f"http://127.0.0.1:{self.server.port}"

        def curl(*args):
            return subprocess.run(["curl", "-s", "--max-time", "60", *args], capture_output=True,
                                  text=True, check=True).stdout

        self.assertEqual(curl("-o", "/dev/null", "-w", "%{http_code}", base + "/health"), "200")
        self.assertEqual(json.loads(curl(base + "/v1/models"))["data"][0]["id"], "tiny")
        self.assertIn("vllm:num_requests_running", curl(base + "/metrics"))
        chat = json.loads(curl(base + "/v1/chat/completions", "-H", "Content-Type: application/json",
                               "-d", json.dumps({"messages": [{"role": "user", "content": "Hi"}],
                                                 "max_tokens": 3, "ignore_eos": True})))
        self.assertEqual(chat["usage"]["completion_tokens"], 3)
        whole = json.loads(curl(base + "/v1/completions", "-H", "Content-Type: application/json",
                                "-d", json.dumps(completion())))
        self.assertEqual(whole["choices"][0]["text"], TEXT_16)

    def test_curl_streams_sse(self):
        out = subprocess.run(
            ["curl", "-sN", "--max-time", "60", f"http://127.0.0.1:{self.server.port}/v1/completions",
             "-H", "Content-Type: application/json",
             "-d", json.dumps(completion(max_tokens=4, stream=True))],
            capture_output=True, text=True, check=True).stdout
        self.assertTrue(out.startswith("data: {"), out)
        self.assertTrue(out.endswith("data: [DONE]\n\n"), out)

    def test_malformed_requests_answer_openai_errors(self):
        cases = [
            ("/v1/completions", "{not json", 400, None),
            ("/v1/completions", {"prompt": PROMPT, "max_tokens": "ten"}, 400, "max_tokens"),
            ("/v1/completions", {"prompt": PROMPT, "temperature": "hot"}, 400, "temperature"),
            ("/v1/completions", {"prompt": PROMPT, "max_tokens": 600}, 400, "prompt"),
            ("/v1/completions", {"prompt": "word " * 600}, 400, "prompt"),
            ("/v1/completions", {"prompt": [1, 999999]}, 400, None),
            ("/v1/completions", {"prompt": PROMPT, "model": "other"}, 404, "model"),
            ("/v1/chat/completions", {"messages": "hi"}, 400, "messages"),
        ]
        for path, body, want, param in cases:
            status, _, payload = self.server.post_json(path, body)
            self.assertEqual(status, want, (body, payload))
            self.assertIn("message", payload["error"])
            self.assertEqual(payload["error"]["code"], want)
            if param is not None:
                self.assertEqual(payload["error"]["param"], param, payload)

    def test_zz_concurrent_streams_with_disconnects_and_metrics(self):
        before = self.server.metrics()
        for _ in range(300):  # the earlier tests' requests all ended
            if before["vllm:num_requests_running"] == 0 and before["vllm:num_requests_waiting"] == 0:
                break
            time.sleep(0.1)
            before = self.server.metrics()
        results, errors = {}, []

        def client(i):
            try:
                if i % 8 == 7:  # goes away after two events
                    results[i] = self.server.stream("/v1/completions", completion(64), stop_after=2)
                else:
                    results[i] = self.server.stream("/v1/completions", completion(16))
            except Exception as error:  # noqa: BLE001 - reported below
                errors.append((i, repr(error)))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(64)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        self.assertEqual(errors, [])
        completed = [i for i in range(64) if i % 8 != 7]
        for i in completed:
            text = "".join(e["choices"][0]["text"] for e in results[i][:-1])
            self.assertEqual(text, TEXT_16, i)
        deadline = time.time() + 30
        while time.time() < deadline:
            after = self.server.metrics()
            if (after["vllm:num_requests_running"] == 0 and
                    after["hwinfer:requests_cancelled_total"] - before.get(
                        "hwinfer:requests_cancelled_total", 0) == 8):
                break
            time.sleep(0.1)
        self.assertEqual(after["vllm:num_requests_running"], 0)
        self.assertEqual(after["vllm:num_requests_waiting"], 0)
        self.assertEqual(after["vllm:kv_cache_usage_perc"], 0)
        delta = lambda name: after[name] - before.get(name, 0)  # noqa: E731
        self.assertEqual(delta("hwinfer:requests_cancelled_total"), 8)
        self.assertEqual(delta("vllm:request_success_total{finished_reason=length}"), 56)
        self.assertEqual(delta("vllm:prompt_tokens_total"), 64 * 6)
        generated = delta("vllm:generation_tokens_total")
        self.assertGreaterEqual(generated, 56 * 16 + 8 * 2)
        self.assertLessEqual(generated, 56 * 16 + 8 * 64)
        self.assertEqual(delta("vllm:time_to_first_token_seconds_count"), 64)
        self.assertEqual(delta("vllm:e2e_request_latency_seconds_count"), 56)
        # Decode utilisation over the last 10 s, against the hardware file and the startup probe.
        for peak in ("spec", "measured"):
            self.assertGreater(after[f"hwinfer:decode_mbu{{peak={peak}}}"], 0)


class BenchEndpointTest(unittest.TestCase):
    """`hwinfer bench --endpoint` against `hwinfer serve`: the in-process bench's requests and
    token counts on the same seed, TTFT/TPOT within a stated margin of the in-process ones."""

    def bench(self, out, *extra):
        run = subprocess.run([HWINFER, "bench", "--config", BENCH_CONFIG, "--num-requests", "8",
                              "--seed", "3", "--no-progress", "--json", out, *extra],
                             capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(out) as f:
            return json.load(f)

    def test_endpoint_bench_matches_the_in_process_bench(self):
        server = Server("--chat-template", "llama2", "--max-sequences", "4", "--no-probe")
        try:
            folder = os.environ.get("TMPDIR", "/tmp")
            url = f"http://127.0.0.1:{server.port}"
            status, _, _ = server.post_json("/v1/completions", completion(4))  # warm up
            self.assertEqual(status, 200)
            for dataset in ([], ["--dataset", "sharegpt:" + SHAREGPT]):
                local = self.bench(os.path.join(folder, f"hw-serve-local-{os.getpid()}.json"),
                                   "--backend", "cpu", "--no-probe", *dataset)
                remote = self.bench(os.path.join(folder, f"hw-serve-remote-{os.getpid()}.json"),
                                    "--endpoint", url, "--model-file", MODEL,
                                    "--hardware", os.path.join(SOURCE_DIR, "configs/hardware",
                                                               "generic-cpu.yaml"), *dataset)
                self.assertEqual(remote["completed"], local["completed"])
                self.assertEqual(remote["failed"], 0)
                self.assertEqual(remote["input_lens"], local["input_lens"])
                self.assertEqual(remote["output_lens"], local["output_lens"])
                self.assertEqual(remote["total_output_tokens"], local["total_output_tokens"])
                # Margin: HTTP, JSON and a client thread per request on a 2-core machine that also
                # runs the server: TPOT at most 4x the in-process one + 50 ms; TTFT (8 requests
                # at once on 4 sequences: half of them queue, so a hiccup counts twice) at most
                # 5x + 500 ms.
                self.assertLessEqual(remote["mean_tpot_ms"], 4 * local["mean_tpot_ms"] + 50)
                self.assertLessEqual(remote["mean_ttft_ms"], 5 * local["mean_ttft_ms"] + 500)
                self.assertGreater(remote["mbu_outside"]["mbu"], 0)
                # `hwinfer compare` puts the two side by side, the served one with its MBU.
                compare = subprocess.run(
                    [HWINFER, "compare", os.path.join(folder, f"hw-serve-local-{os.getpid()}.json"),
                     os.path.join(folder, f"hw-serve-remote-{os.getpid()}.json")],
                    capture_output=True, text=True, timeout=60)
                self.assertEqual(compare.returncode, 0, compare.stderr)
                self.assertIn(url, compare.stdout)
            chat = self.bench(os.path.join(folder, f"hw-serve-chat-{os.getpid()}.json"),
                              "--endpoint", url, "--model-file", MODEL, "--api", "chat")
            self.assertEqual(chat["completed"], 8)
            bad = subprocess.run([HWINFER, "bench", "--endpoint", "ftp://x", "--model-file", MODEL],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(bad.returncode, 1)
            self.assertIn("expected http://HOST:PORT", bad.stderr)
        finally:
            self.assertEqual(server.stop(), 0)


class ConfigTest(unittest.TestCase):
    def test_serve_from_a_config_file(self):
        server = Server("--no-probe", model_args=["--config", BENCH_CONFIG])
        try:
            status, _, body = server.post_json("/v1/completions", completion())
            self.assertEqual(status, 200, body)
            self.assertEqual(body["choices"][0]["text"], TEXT_16)
        finally:
            self.assertEqual(server.stop(), 0)
        bad = subprocess.run([HWINFER, "serve", "--port", "0"], capture_output=True, text=True,
                             timeout=60)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("-m MODEL.gguf or --config FILE", bad.stderr)


class QueueAndDrainTest(unittest.TestCase):
    def test_replicas_on_cpu_and_vulkan_each_serve_llama_cpps_text(self):
        """--devices cpu:0,vulkan:0: one replica per device; round robin alternates them, each
        gives llama.cpp's greedy text, and /metrics counts each device's requests under its
        device label."""
        listed = subprocess.run([HWINFER, "devices", "--no-probe"], capture_output=True,
                                text=True, timeout=120).stdout
        if not re.search(r"^  \[\d+\] vulkan:0$", listed, re.M):
            self.skipTest("no vulkan:0 device (the Vulkan backend or lavapipe is missing)")
        server = Server("--no-probe", "--routing", "round_robin",
                        device_args=["--devices", "cpu:0,vulkan:0"])
        try:
            self.assertIn("on cpu:0, vulkan:0", "".join(server.log))
            for _ in range(4):
                status, _, body = server.post_json("/v1/completions", completion())
                self.assertEqual(status, 200, body)
                self.assertEqual(body["choices"][0]["text"], TEXT_16)
            metrics = server.metrics()
            for device in ("cpu:0", "vulkan:0"):
                key = f"vllm:request_success_total{{device={device},finished_reason=length}}"
                self.assertEqual(metrics[key], 2, metrics)
                self.assertEqual(metrics[f"vllm:generation_tokens_total{{device={device}}}"], 32)
        finally:
            self.assertEqual(server.stop(), 0, "".join(server.log))

    def test_full_queue_answers_503_with_retry_after(self):
        server = Server("--max-sequences", "1", "--max-waiting", "1", "--no-probe")
        try:
            statuses, retry = [], []

            def client():
                status, headers, _ = server.post_json("/v1/completions", completion(200))
                statuses.append(status)
                if status == 503:
                    retry.append(headers.get("Retry-After"))

            threads = [threading.Thread(target=client) for _ in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
            self.assertIn(503, statuses)
            self.assertIn(200, statuses)
            self.assertEqual(set(retry), {"1"})
        finally:
            self.assertEqual(server.stop(), 0)

    def test_sigterm_drains_in_flight_requests_and_exits_0(self):
        server = Server("--drain-timeout", "60", "--no-probe")
        box = {}

        def client():
            box["events"] = server.stream("/v1/completions", completion(200))

        t = threading.Thread(target=client)
        t.start()
        time.sleep(0.5)
        self.assertEqual(server.stop(signal.SIGTERM), 0)
        t.join(timeout=60)
        events = box["events"]
        self.assertEqual(events[-1], "[DONE]")
        self.assertEqual(events[-2]["choices"][0]["finish_reason"], "length")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
