"""The dashboard as a person meets it: ``engram dashboard`` started as a real process (uvicorn),
driven by a real headless browser (Debian's Chromium through ChromeDriver, with Selenium), and
its screenshots checked for content: the page's size, and more than a blank page's colours."""

from __future__ import annotations

import contextlib
import http.client
import io
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from agent_support import wait_until
from engram.config import load_config
from engram.usage import UsageLedger, ledger_path

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
ENGRAM = str(Path(sys.executable).with_name("engram"))
SHOTS = Path("/tmp/dashboard-shots")
MEMORY = "Deploys go out on Tuesdays after the change review."


def engram(project: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ENGRAM, *args], cwd=project, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with one stored memory and a few days of API usage in its ledger."""
    root = tmp_path / "shop"
    root.mkdir()
    (root / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n\n[embedder]\nprovider = "hash"\n', encoding="utf-8"
    )
    stored = engram(root, "remember", MEMORY, "--type", "decision")
    assert stored.returncode == 0, stored.stderr
    now = time.time()
    with UsageLedger(ledger_path(load_config(start=root))) as book:
        for day, tokens in enumerate([900, 2400, 1500]):
            book.record(
                "openai",
                "text-embedding-3-small",
                tokens,
                cost_usd=tokens * 2e-8,
                at=now - (3 - day) * 86_400,
            )
    return root


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/health", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@contextlib.contextmanager
def started(project: Path, url: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """``engram dashboard ARGS`` up and answering at ``url``; interrupted (then killed if it
    hangs) when the block ends, whatever happened in it."""
    server = subprocess.Popen(
        [ENGRAM, "dashboard", *args],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: server.poll() is not None or healthy(url), 60, "the dashboard")
        assert server.poll() is None, f"dashboard exited: {server.communicate()}"
        yield server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        for stream in (server.stdout, server.stderr):
            if stream:
                stream.close()


@pytest.fixture
def dashboard(project: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``engram dashboard`` on a free port, up and answering; stopped afterwards."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with started(project, url, "--port", str(port)) as server:
        yield url, server


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    """Headless Chromium from Debian, never a downloaded browser (Selenium Manager is not
    asked: the binary and the driver are given)."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if missing:
        pytest.fail(
            f"{', '.join(missing)} missing: the browser test needs Debian's Chromium; run "
            "`bash .ci/system-packages` (apt-get install chromium chromium-driver)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1200,900",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver: webdriver.Chrome, tmp_path: Path, name: str) -> Image.Image:
    """The page as a PNG, kept with the test (and in /tmp/dashboard-shots for a person)."""
    png = driver.get_screenshot_as_png()
    (tmp_path / name).write_bytes(png)
    SHOTS.mkdir(exist_ok=True)
    shutil.copy(tmp_path / name, SHOTS / name)
    return Image.open(io.BytesIO(png))


def assert_not_blank(image: Image.Image, driver: webdriver.Chrome) -> None:
    width, height = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    assert (image.width, image.height) == (width, height) and height > 300
    colours = image.convert("RGB").getcolors(maxcolors=1_000_000) or []
    assert len(colours) > 20, "the screenshot is (nearly) blank"


def test_search_in_a_real_browser_finds_the_stored_memory(
    dashboard: tuple[str, subprocess.Popen[str]], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    url, _ = dashboard
    browser.get(url)
    assert "decision: 1" in browser.find_element(By.TAG_NAME, "main").text
    box = browser.find_element(By.NAME, "q")
    box.send_keys("when do deploys go out")
    box.submit()
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.ID, "results"))
    results = browser.find_element(By.ID, "results").text
    assert MEMORY in results and "memory/decision/" in results
    assert_not_blank(screenshot(browser, tmp_path, "dashboard-search.png"), browser)


def test_at_400_px_a_hit_links_to_its_memory_and_times_are_local(
    dashboard: tuple[str, subprocess.Popen[str]], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    url, _ = dashboard
    browser.set_window_size(400, 900)
    for path in ("/?q=when+do+deploys+go+out", "/index", "/usage", "/activity"):
        browser.get(f"{url}{path}")
        wide, inner = browser.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert wide <= inner, f"{path} scrolls sideways at 400 px ({wide} > {inner})"
    browser.get(f"{url}/?q=when+do+deploys+go+out")
    image = screenshot(browser, tmp_path, "dashboard-400px.png")
    assert_not_blank(image, browser)
    assert image.width <= 400 * 2  # the device pixel ratio may double it, never wider
    link = browser.find_element(By.CSS_SELECTOR, "#results .hit a")
    link.click()
    WebDriverWait(browser, 30).until(lambda d: "/memory/" in d.current_url)
    main = browser.find_element(By.TAG_NAME, "main").text
    assert MEMORY in main
    stamp = browser.find_element(By.CSS_SELECTOR, "main table time")
    assert stamp.get_attribute("datetime")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d( \S+)?", stamp.text), stamp.text  # not ISO


def test_usage_page_draws_the_plot(
    dashboard: tuple[str, subprocess.Popen[str]], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    url, _ = dashboard
    browser.get(f"{url}/usage")
    charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart")
    assert len(charts) == 2 and charts[0].size["width"] > 500
    assert len(charts[0].find_elements(By.TAG_NAME, "rect")) == 3
    assert "max 2400 tokens" in charts[0].text
    image = screenshot(browser, tmp_path, "dashboard-usage.png")
    assert_not_blank(image, browser)
    bar_blue = (0x3B, 0x6E, 0xA5)
    assert any(c == bar_blue for _, c in image.convert("RGB").getcolors(1_000_000) or [])


def test_index_and_activity_pages_show_the_project(
    dashboard: tuple[str, subprocess.Popen[str]], browser: webdriver.Chrome, tmp_path: Path
) -> None:
    url, _ = dashboard
    browser.get(f"{url}/index")
    rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert any(r.startswith("memories 1 1 0") for r in rows), rows
    assert "Store sqlite, embedder hash" in browser.find_element(By.TAG_NAME, "main").text
    assert_not_blank(screenshot(browser, tmp_path, "dashboard-index.png"), browser)
    browser.get(f"{url}/activity")
    kinds = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "tbody td:nth-child(2)")]
    assert "memory written" in kinds and kinds.count("embed request") == 3
    assert_not_blank(screenshot(browser, tmp_path, "dashboard-activity.png"), browser)


def test_a_second_start_says_already_running(
    dashboard: tuple[str, subprocess.Popen[str]], project: Path
) -> None:
    url, server = dashboard
    port = url.rsplit(":", 1)[1]
    for args in (["--port", port], []):  # the same port, and the recorded one from anywhere
        second = engram(project, "dashboard", *args, timeout=60)
        assert second.returncode == 0, second.stderr
        assert f"already running at {url}" in second.stdout
    assert server.poll() is None and healthy(url)


def test_allow_remote_serves_elsewhere_with_a_warning(project: Path) -> None:
    port = free_port()
    args = ("--host", "0.0.0.0", "--allow-remote", "--port", str(port))
    with started(project, f"http://127.0.0.1:{port}", *args) as server:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=30)
    assert server.returncode == 130
    assert "warning:" in err and "reads every memory" in err and "Traceback" not in err


def test_ctrl_c_stops_it_like_any_command(
    dashboard: tuple[str, subprocess.Popen[str]], project: Path
) -> None:
    url, server = dashboard
    assert (project / ".engram" / "dashboard.json").is_file()
    server.send_signal(signal.SIGINT)
    _, err = server.communicate(timeout=30)
    assert server.returncode == 130 and "Traceback" not in err
    assert not (project / ".engram" / "dashboard.json").exists() and not healthy(url)


def test_sigterm_stops_it_like_ctrl_c(
    dashboard: tuple[str, subprocess.Popen[str]], project: Path
) -> None:
    url, server = dashboard
    assert (project / ".engram" / "dashboard.json").is_file()
    server.send_signal(signal.SIGTERM)
    _, err = server.communicate(timeout=30)
    assert server.returncode == 130 and "Traceback" not in err
    assert not (project / ".engram" / "dashboard.json").exists() and not healthy(url)


def get_with_host(url: str, path: str, host: str) -> tuple[int, bytes]:
    """A request as a rebinding page would send it: to our address, another name in Host."""
    parsed = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parsed.hostname or "", parsed.port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def test_a_foreign_host_header_is_400_dns_rebinding(
    dashboard: tuple[str, subprocess.Popen[str]],
) -> None:
    url, _ = dashboard
    port = url.rsplit(":", 1)[1]
    status, body = get_with_host(url, "/api/memories", f"evil.example:{port}")
    assert status == 400 and b"Tuesdays" not in body
    status, body = get_with_host(url, "/api/memories", f"localhost:{port}")
    assert status == 200 and b"Tuesdays" in body


def test_a_port_held_by_another_program_is_named(project: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = engram(project, "dashboard", "--port", str(port), timeout=60)
    assert result.returncode == 1 and "another program" in result.stderr
    assert "--port" in result.stderr and "Traceback" not in result.stderr


def test_a_non_loopback_host_needs_allow_remote(project: Path) -> None:
    result = engram(project, "dashboard", "--host", "0.0.0.0", timeout=60)
    assert result.returncode == 1 and "--allow-remote" in result.stderr
