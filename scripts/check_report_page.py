#!/usr/bin/env python3
"""Checks a `tessera report` page as a browser shows it.

Renders the page in headless Chromium (Debian's `chromium`), with a small script added to a
copy of it that measures what was laid out: the sections, and for every plot its size, its
axes (frame, ticks, axis labels) and each series' box. Chromium prints the DOM after the
script ran (--dump-dom); the measurements are read back from it and checked:

  * the page loads and has the sections asked for (--sections);
  * there are at least --min-plots plots, each with a visible frame, tick labels, non-empty
    axis labels and at least one series whose box is not empty and lies inside the frame;
  * every legend label lies inside its picture (none cut at the edge), and every plot is as
    wide as the page gives it (at least 90% of its container);
  * with --series NAME (repeatable), some plot has a series of that name.

With --screenshot FILE it also writes a PNG of the whole page. Exit status 0 when every check
holds, 1 with one line per failure, 2 when Chromium is missing or fails to render.
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MEASURE = r"""
<script>
(function () {
  const out = {title: document.title, sections: [], plots: [], tables: document.querySelectorAll('table').length};
  for (const s of document.querySelectorAll('section')) out.sections.push(s.id);
  for (const svg of document.querySelectorAll('svg.plot')) {
    const rect = svg.getBoundingClientRect();
    const axes = svg.querySelector('g.axes');
    const frame = axes ? axes.querySelector('rect') : null;
    const fb = frame ? frame.getBBox() : null;
    const text = (sel) => { const t = svg.querySelector(sel); return t ? t.textContent : ''; };
    const plot = {
      title: text('text.title'), width: rect.width, height: rect.height,
      frame: fb ? {x: fb.x, y: fb.y, width: fb.width, height: fb.height} : null,
      x_label: text('text.x-label'), y_label: text('text.y-label'),
      ticks: axes ? axes.querySelectorAll('text').length - 2 : 0, series: [], legend: [],
      view_width: svg.viewBox && svg.viewBox.baseVal ? svg.viewBox.baseVal.width : 0,
      room: svg.parentElement ? svg.parentElement.clientWidth : 0};
    for (const t of svg.querySelectorAll('g.legend text')) {
      const b = t.getBBox();
      plot.legend.push({text: t.textContent, x: b.x, width: b.width});
    }
    for (const g of svg.querySelectorAll('g.series')) {
      const b = g.getBBox();
      plot.series.push({name: g.getAttribute('data-name'), x: b.x, y: b.y, width: b.width, height: b.height});
    }
    out.plots.push(plot);
  }
  out.height = document.documentElement.scrollHeight;
  const pre = document.createElement('pre');
  pre.id = 'tessera-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render(browser, page, work, extra):
    """Runs Chromium on `page` with `extra` flags; its stdout."""
    cmd = [browser, *CHROMIUM_FLAGS, f"--user-data-dir={work}/profile", *extra, "file://" + os.path.abspath(page)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited with {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


def measure(browser, page, work):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    if "</body>" not in text:
        raise RuntimeError(f"{page}: no </body>: not a complete HTML page")
    probe = os.path.join(work, "probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", MEASURE + "</body>", 1))
    # A desktop window, as wide as the screenshots: the page's plots are checked to fill it.
    dom = render(browser, probe, work, ["--window-size=1280,2000", "--dump-dom"])
    found = re.search(r'<pre id="tessera-check">(.*?)</pre>', dom, re.S)
    if not found:
        raise RuntimeError("the page's measurements are missing from the DOM Chromium printed: did it load?")
    return json.loads(html.unescape(found.group(1)))


def series_problems(plot, tolerance=8.0):
    """The reasons the plot's series do not show (empty list: at least one shows, all inside)."""
    problems, shown = [], 0
    f = plot["frame"]
    for s in plot["series"]:
        if s["width"] <= 0 and s["height"] <= 0:
            problems.append(f"series '{s['name']}' has an empty box")
            continue
        shown += 1
        inside = (s["x"] >= f["x"] - tolerance and s["y"] >= f["y"] - tolerance
                  and s["x"] + s["width"] <= f["x"] + f["width"] + tolerance
                  and s["y"] + s["height"] <= f["y"] + f["height"] + tolerance)
        if not inside:
            problems.append(f"series '{s['name']}' reaches outside the frame")
    if shown == 0:
        problems.append("no series shows")
    return problems


def layout_problems(plot, tolerance=1.0):
    """Legend labels cut at the picture's edge, and a plot narrower than the page holds."""
    problems = []
    edge = plot["view_width"] or plot["width"]
    for entry in plot["legend"]:
        if entry["x"] + entry["width"] > edge + tolerance:
            problems.append(f"legend label '{entry['text']}' is cut at the right edge"
                            f" ({entry['x'] + entry['width']:.0f} of {edge:.0f})")
    if plot["room"] > 0 and plot["width"] < 0.9 * plot["room"]:
        problems.append(f"{plot['width']:.0f} px wide where the page has {plot['room']:.0f}")
    return problems


def check(facts, args):
    failures = []
    for section in filter(None, args.sections.split(",")):
        if section not in facts["sections"]:
            failures.append(f"section '{section}' is missing (sections: {', '.join(facts['sections'])})")
    if len(facts["plots"]) < args.min_plots:
        failures.append(f"{len(facts['plots'])} plots, expected at least {args.min_plots}")
    for i, plot in enumerate(facts["plots"]):
        name = f"plot {i + 1} '{plot['title']}'"
        if not plot["frame"] or plot["frame"]["width"] <= 0 or plot["frame"]["height"] <= 0:
            failures.append(f"{name}: no visible frame")
            continue
        if plot["ticks"] < 4:
            failures.append(f"{name}: {plot['ticks']} tick labels")
        if not plot["x_label"].strip() or not plot["y_label"].strip():
            failures.append(f"{name}: an axis without its label")
        failures += [f"{name}: {p}" for p in series_problems(plot)]
        failures += [f"{name}: {p}" for p in layout_problems(plot)]
    names = {s["name"] for p in facts["plots"] for s in p["series"]}
    for wanted in args.series:
        if wanted not in names:
            failures.append(f"no plot has a series '{wanted}' (series: {', '.join(sorted(names))})")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("page", help="the HTML file `tessera report` wrote")
    ap.add_argument("--sections", default="runs,loss", help="comma-separated section ids that must be there")
    ap.add_argument("--min-plots", type=int, default=1)
    ap.add_argument("--series", action="append", default=[], help="a series name some plot must have")
    ap.add_argument("--screenshot", help="also write a PNG of the whole page here")
    args = ap.parse_args()
    browser = chromium()
    if not browser:
        print("check_report_page: no chromium on PATH (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as work:
        try:
            facts = measure(browser, args.page, work)
            if args.screenshot:
                # The page's own height as laid out, so the shot holds all of it.
                render(browser, args.page, work, [f"--window-size=1280,{int(facts['height']) + 40}",
                                                  f"--screenshot={os.path.abspath(args.screenshot)}"])
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
            print(f"check_report_page: {e}", file=sys.stderr)
            return 2
    failures = check(facts, args)
    series = sum(len(p["series"]) for p in facts["plots"])
    print(f"{args.page}: {len(facts['sections'])} sections ({', '.join(facts['sections'])}), "
          f"{len(facts['plots'])} plots with {series} series, {facts['tables']} tables")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
