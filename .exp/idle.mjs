import { chromium } from 'playwright-core';
import { readFileSync } from 'node:fs';
const exe = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const browser = await chromium.launch({ executablePath: exe, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...(process.env.XFLAGS ? process.env.XFLAGS.split(' ') : [])] });
const ticks = () => { let s = 0; for (const line of readFileSync('/proc/self/stat', 'utf8').split('\n')) {} return s; };
import { execSync } from 'node:child_process';
const chromeCpu = () => Number(execSync(`for p in $(pgrep -f chromium); do awk '{print $14+$15}' /proc/$p/stat; done | awk '{s+=$1} END {print s}'`).toString());
const cases = {
  blank: '<p>hello</p>',
  input: '<input id=i autofocus><p>hello</p>',
  pulse: '<style>@keyframes p{50%{opacity:.3}} .d{width:8px;height:8px;background:red;animation:p 1.4s infinite}</style><div class=d></div>',
  spinner: '<style>@keyframes s{to{transform:rotate(360deg)}} .d{width:12px;height:12px;border:2px solid;border-right-color:transparent;border-radius:50%;animation:s .7s linear infinite}</style><div class=d></div>',
};
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
for (const [name, html] of Object.entries(cases)) {
  const page = await context.newPage();
  await page.setContent(html);
  await page.waitForTimeout(500);
  const before = chromeCpu();
  await page.waitForTimeout(5000);
  console.log(name, (chromeCpu() - before) / 100, 's per 5 s');
  await page.close();
}
await browser.close();
