// How RESEARCH reads one page's HTML (src/agent/page.ts over src/text/html-walk.ts): what counts as the title, the
// description, the links, the main text and its blocks, on markup as browsers meet it (optional end tags,
// misnesting, entities). The worst cases in time are in page-hostile.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePage, readPage, splitSentences } from '../../src/agent/page.ts';

const URL_ = 'https://kestrel.example/company/';
const parse = (html: string) => parsePage(html, URL_);

describe('parsePage', () => {
  it('takes the title from the head, else og:title, else the first h1; never an SVG title', () => {
    assert.equal(parse('<html><head><title> Kestrel &amp; Sons </title></head><body><h1>Welcome</h1></body></html>').title, 'Kestrel & Sons');
    assert.equal(parse('<title>Without a head</title><p>Body</p>').title, 'Without a head');
    assert.equal(parse('<meta property="og:title" content="From OG"><body><h1>Heading</h1></body>').title, 'From OG');
    assert.equal(parse('<body><svg><title>Icon</title></svg><h1>First <b>heading</b></h1><h1>Second</h1></body>').title, 'First heading');
    assert.equal(parse('<body><p>Text</p><title>In the body</title></body>').title, null);
  });

  it('takes the description from meta description (any case), else og:description, else twitter:description', () => {
    assert.equal(parse('<meta name="Description" content=" Route  planning. "><meta property="og:description" content="OG">').description, 'Route planning.');
    assert.equal(parse('<meta name="description" content=""><meta property="og:description" content="OG">').description, 'OG');
    assert.equal(parse('<meta name="twitter:description" content="Tweet">').description, 'Tweet');
    assert.equal(parse('<p>Nothing</p>').description, null);
  });

  it('resolves every link against the page, without its fragment, with its text, chrome included', () => {
    const page = parse(
      '<nav><a href="/about#team">About <b>us</b></a></nav><main><a href="pricing">Pricing</a><a>no href</a>' +
        '<a href="http://[broken">Broken</a><a href="/one">One<a href="/two">Two</a></a></main><noscript><a href="/ns">No script</a></noscript>',
    );
    assert.deepEqual(page.links, [
      { url: 'https://kestrel.example/about', text: 'About us' },
      { url: 'https://kestrel.example/company/pricing', text: 'Pricing' },
      { url: 'https://kestrel.example/one', text: 'One' },
      { url: 'https://kestrel.example/two', text: 'Two' },
    ]);
  });

  it('reads the first main, else the only article, else the body', () => {
    const withMain = parse('<body><p>Outside.</p><div role="main"><p>Inside.</p></div><main><p>Second main.</p></main></body>');
    assert.deepEqual(withMain.blocks, ['Inside.']);
    assert.deepEqual(parse('<body><p>Outside.</p><article><h2>Post</h2><p>Body.</p></article></body>').blocks, ['Post', 'Body.']);
    assert.deepEqual(parse('<body><article><p>One.</p></article><article><p>Two.</p></article></body>').blocks, ['One.', 'Two.']);
    // The main element itself is not chrome to itself, even when the body would drop it.
    assert.deepEqual(parse('<body><main class="cookie-free" aria-hidden="true"><p>Kept.</p></main></body>').blocks, ['Kept.']);
  });

  it('leaves out scripts, forms, SVG and the like, and the chrome inside the container', () => {
    const page = parse(
      '<body><main><p>Kept <script>var x = "<p>no</p>";</script>text.</p><form><p>Form</p></form><button>Button</button>' +
        '<template><p>Template</p></template><svg><text>SVG</text></svg><aside>Aside</aside><div role="navigation">Menu</div>' +
        '<div aria-hidden="true">Hidden</div><p hidden>Hidden too</p><div id="CookieBar">Cookies</div><div class="gdpr-Consent">Consent</div>' +
        '<p>Last.</p></main></body>',
    );
    assert.deepEqual(page.blocks, ['Kept text.', 'Last.']);
  });

  it('drops the page header without a main element: at the top of the body, or holding a menu', () => {
    const page = parse(
      '<body><header><a href="/">Logo</a></header><div><header><h2>Card title</h2></header><p>Card.</p></div>' +
        '<div><header><h2>Site</h2><ul><li>Menu</li></ul></header><p>After.</p></div></body>',
    );
    assert.deepEqual(page.blocks, ['Card title', 'Card.', 'After.']);
    assert.deepEqual(page.headings, ['Card title']);
    // Inside <main> a header is content.
    assert.deepEqual(parse('<main><header><h1>Title</h1><ul><li>Tag</li></ul></header><p>Text.</p></main>').blocks, ['Title', 'Tag', 'Text.']);
  });

  it('splits text into blocks at block elements only, closing what HTML lets a page leave open', () => {
    assert.deepEqual(parse('<body><p>One<p>Two<div>Three</div>four</body>').blocks, ['One', 'Two', 'Three', 'four']);
    assert.deepEqual(parse('<ul><li>A<li>B<ul><li>Inner</ul><li>C</ul>').blocks, ['A', 'B', 'Inner', 'C']);
    assert.deepEqual(parse('<table><tr><td>a<td>b<tr><td>c</table>').blocks, ['a', 'b', 'c']);
    assert.deepEqual(parse('<dl><dt>Term<dd>Definition<dt>Next</dl>').blocks, ['Term', 'Definition', 'Next']);
    // A line break in the source is a space; <b> left open across a paragraph does not end it.
    assert.deepEqual(parse('<p>A sentence\nwrapped in the source.</p><b><p>Bold</b> and not.</p>').blocks, ['A sentence wrapped in the source.', 'Bold and not.']);
    assert.deepEqual(parse('<p>Tom &amp; Jerry&nbsp;&copy; 2024 &#x41;&#66; &unknown;</p>').blocks, ['Tom & Jerry © 2024 AB &unknown;']);
    assert.deepEqual(parse('<h1>Title<h2>Sub</h2></h1><h3>Three</h3><h4>Four</h4>').headings, ['Title', 'Sub', 'Three']);
  });

  it('reads a page without </head> or <body> as a browser does', () => {
    const page = parse('<html><head><title>T</title><meta name="description" content="D"><p>Body text.</p>');
    assert.deepEqual([page.title, page.description, page.blocks], ['T', 'D', ['Body text.']]);
  });
});

describe('splitSentences', () => {
  it('splits at sentence ends, not after an abbreviation or an initial', () => {
    assert.deepEqual(splitSentences('Acme Inc. serves 40 U.S. teams. It was founded in 2010, e.g. by Dr. Who! Why? "Quoted." (Aside.) Done'), [
      'Acme Inc. serves 40 U.S. teams.',
      'It was founded in 2010, e.g. by Dr. Who!',
      'Why?',
      '"Quoted."',
      '(Aside.)',
      'Done',
    ]);
  });
});

describe('readPage', () => {
  it('matches the company under its name without the legal form', () => {
    const html = '<main><p>Kestrel plans routes for carriers.</p><p>Another firm plans routes for carriers.</p></main>';
    const reading = readPage({ html, url: URL_, companyName: 'Kestrel, Ltd.', followUps: 0 });
    assert.deepEqual(reading.facts.map((fact) => fact.text), ['Kestrel plans routes for carriers.']);
  });
});
