"""Screenshot the "Compiled graphs" section of a tracekit HTML report with headless Chromium (selenium).

Usage: python benchmarks/gpu/graphs_screenshot.py RUN/report.html OUT.png
Needs selenium and Debian's chromium + chromium-driver (what tests/report/test_html_browser.py uses).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main(page: str, png: str) -> int:
    from selenium import webdriver
    from selenium.webdriver.common.by import By

    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1100"):
        opts.add_argument(a)
    driver = webdriver.Chrome(options=opts)
    try:
        driver.get(Path(page).resolve().as_uri())
        time.sleep(2)  # plotly draws after load
        section = driver.find_element(By.ID, "graphs")
        driver.execute_script("arguments[0].scrollIntoView();", section)
        time.sleep(1)
        driver.save_screenshot(png)
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
