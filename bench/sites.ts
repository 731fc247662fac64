// Company websites for the runs workload, served on loopback: every lead's `companyWebsite` is /c/{n} here, a home
// page that links an about page and a product page, as RESEARCH expects of a small company site.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const nav = (base: string) => `<nav><a href="${base}">Home</a> <a href="${base}/about">About us</a> <a href="${base}/product">Product</a>
  <a href="${base}/careers">Careers</a></nav>`;
const footer = '<footer><p>© 2025 All rights reserved. <a href="/privacy">Privacy</a></p></footer>';

function page(title: string, base: string, main: string): string {
  return `<!doctype html><html lang="en"><head><title>${title}</title>
<meta name="description" content="Route planning for regional carriers."></head>
<body>${nav(base)}<main>${main}</main>${footer}</body></html>`;
}

function render(n: string, rest: string): string | null {
  const base = `/c/${n}`;
  const company = `Company ${n} Ltd`;
  switch (rest) {
    case '':
      return page(company, base, `<h1>${company}</h1>
<p>${company} is a route-planning platform for regional carriers. Dispatchers build tomorrow's plan in minutes instead of hours.</p>
<p>More than 340 carriers in 11 countries plan their deliveries with ${company}. Together they drive 2.1 million stops a month.</p>
<p>Nobody wants another tool. It fits the way your team already works.</p>`);
    case '/about':
      return page(`About us | ${company}`, base, `<h1>About us</h1>
<p>${company} was founded in 2016 in Leeds by two former dispatchers who were tired of planning routes in spreadsheets.</p>
<p>Today the team of 85 people works from offices in Leeds, Rotterdam and Kraków.</p>
<p>We raised a Series B of €30 million in 2023.</p>`);
    case '/product':
      return page(`Product | ${company}`, base, `<h1>Product</h1>
<p>The planner builds routes for up to 5,000 stops in under two minutes.</p>
<p>The driver app works offline and syncs proof of delivery when the signal returns.</p>`);
    default:
      return null;
  }
}

export interface Sites {
  url: string;
  /** Pages served so far. */
  pages(): number;
  close(): Promise<void>;
}

export async function startSites(): Promise<Sites> {
  let served = 0;
  const server = createServer((req, res) => {
    const match = /^\/c\/(\d+)(\/[a-z]+)?$/.exec(req.url ?? '');
    const html = match ? render(match[1]!, match[2] ?? '') : null;
    if (!html) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    served++;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html) }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pages: () => served,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
