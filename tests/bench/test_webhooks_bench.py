"""The webhook benchmark loads both endpoints, checks that every delivery was queued, and prints
its figures (printed, not judged: no timing is asserted here)."""

import json
import re

import pytest
from githubkit import webhooks

from bench import webhooks as bench
from bench.webhook_load import Answer, deliveries
from bench.webhook_servers import SECRET, BenchmarkFailed


@pytest.mark.parametrize("client", ["raw", "httpx"])
def test_the_benchmark_prints_both_endpoints_figures_after_checking_every_delivery(
    capsys: pytest.CaptureFixture[str], client: str
) -> None:
    bench.main(["--requests", "50", "--concurrency", "4", "--client", client])

    out = capsys.readouterr().out
    for label in (
        "p50 latency (ms)",
        "p99 latency (ms)",
        "mean latency (ms)",
        "throughput (requests/s)",
        "  uvicorn process",
        "  load client",
    ):
        assert re.search(rf"^{re.escape(label)} +[\d,.]+ +[\d,.]+$", out, re.MULTILINE), label
    assert re.search(r"^  redis-server +\d+\.\d\d +-$", out, re.MULTILINE)
    assert re.search(r"^Redis round trips / request +\d+\.\d\d +-$", out, re.MULTILINE)
    assert re.search(r"^p99 real / bare +\d+\.\d\d +goal ≤ 3$", out, re.MULTILINE)
    assert re.search(r"^real server CPU \(ms\) +\d+\.\d\d +goal ≤ 0\.8$", out, re.MULTILINE)
    # The warm-up defaults to the concurrency (4) or a tenth of the requests (5), the larger.
    assert (
        "verified: 50 of 50 measured deliveries (and 5 warm-up) answered 202 enqueued; "
        "ZCARD arq:queue = 55, one job per delivery"
    ) in out


def test_every_delivery_is_signed_and_for_its_own_pull_request_and_head() -> None:
    sent = deliveries(3)

    payloads = [json.loads(d.body) for d in sent]
    assert all(webhooks.verify(SECRET, d.body, d.headers["X-Hub-Signature-256"]) for d in sent)
    assert [p["pull_request"]["number"] for p in payloads] == [1, 2, 3]
    assert len({p["pull_request"]["head"]["sha"] for p in payloads}) == 3
    assert len({d.id for d in sent}) == len({d.job_id for d in sent}) == 3
    assert (
        sent[0].job_id
        == f"review:Codertocat/Hello-World#1@{payloads[0]['pull_request']['head']['sha']}"
    )
    assert sent[0].request.endswith(b"\r\n\r\n" + sent[0].body)


def test_a_delivery_not_acknowledged_as_enqueued_fails_the_run() -> None:
    sent = deliveries(2)
    enqueued = json.dumps({"outcome": "enqueued", "delivery": sent[0].id}).encode()
    duplicate = json.dumps({"outcome": "duplicate", "delivery": sent[1].id}).encode()
    answers = [Answer(202, enqueued, 0.001), Answer(200, duplicate, 0.001)]

    with pytest.raises(BenchmarkFailed, match="bench-2 got 200"):
        bench.check_acknowledged("real", sent, answers)


def test_a_delivery_without_its_job_in_redis_fails_the_run(redis_url: str) -> None:
    with pytest.raises(BenchmarkFailed, match="ZCARD arq:queue = 0 after 2 deliveries"):
        bench.check_enqueued(redis_url, deliveries(2))
