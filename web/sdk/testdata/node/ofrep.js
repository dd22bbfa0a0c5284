// OpenFeature's server SDK with the OFREP provider against Bunting: single
// evaluations of every type, FeatBit parity of splits, errors, and the bulk
// endpoint with ETags.
'use strict';
const assert = require('node:assert/strict');
const { OpenFeature } = require('@openfeature/server-sdk');
const { OFREPProvider } = require('@openfeature/ofrep-provider');
const { config, result } = require('./common');

async function main() {
  await OpenFeature.setProviderAndWait(new OFREPProvider({
    baseUrl: config.url,
    headers: [['Authorization', config.serverSecret]],
  }));
  const c = OpenFeature.getClient();
  const u1 = { targetingKey: 'u1' };

  let d = await c.getBooleanDetails('ft-bool', false, u1);
  assert.deepEqual([d.value, d.reason, d.errorCode], [true, 'STATIC', undefined], JSON.stringify(d));
  assert.ok(d.variant, 'a variant');
  d = await c.getBooleanDetails('ft-rule', true, { targetingKey: 'u1', country: 'us' });
  assert.deepEqual([d.value, d.reason], [false, 'TARGETING_MATCH'], JSON.stringify(d));
  d = await c.getBooleanDetails('ft-off', true, u1);
  assert.deepEqual([d.value, d.reason], [false, 'DISABLED'], JSON.stringify(d));
  d = await c.getBooleanDetails('ft-seg', true, { targetingKey: 'u-seg' });
  assert.deepEqual([d.value, d.reason], [false, 'TARGETING_MATCH'], JSON.stringify(d));
  assert.equal(await c.getStringValue('ft-string', '', u1), 'blue');
  assert.equal(await c.getNumberValue('ft-number', 0, u1), 10);
  assert.deepEqual(await c.getObjectValue('ft-json', {}, u1), { limit: 5, tags: ['a'] });

  const split = [];
  for (const key of config.splitUsers) {
    const s = await c.getBooleanDetails('ft-split', false, { targetingKey: key });
    assert.equal(s.reason, 'SPLIT', JSON.stringify(s));
    split.push(s.value);
  }

  d = await c.getBooleanDetails('no-such-flag', true, u1);
  assert.deepEqual([d.value, d.errorCode], [true, 'FLAG_NOT_FOUND'], JSON.stringify(d));
  d = await c.getStringDetails('ft-bool', 'x', u1);
  assert.deepEqual([d.value, d.errorCode], ['x', 'TYPE_MISMATCH'], JSON.stringify(d));
  d = await c.getBooleanDetails('ft-bool', false, {});
  assert.deepEqual([d.value, d.errorCode], [false, 'TARGETING_KEY_MISSING'], JSON.stringify(d));

  await OpenFeature.setProviderAndWait('refused', new OFREPProvider({
    baseUrl: config.url, headers: [['Authorization', config.unknownSecret]],
  }));
  d = await OpenFeature.getClient('refused').getBooleanDetails('ft-bool', false, u1);
  assert.deepEqual([d.value, d.errorCode], [false, 'GENERAL'], JSON.stringify(d));

  // Bulk, as static-context (browser) providers call it, with a client secret.
  const bulk = (headers) => fetch(config.url + '/ofrep/v1/evaluate/flags', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: config.clientSecret, ...headers },
    body: JSON.stringify({ context: { targetingKey: 'u1', country: 'us' } }),
  });
  const first = await bulk({});
  assert.equal(first.status, 200);
  const etag = first.headers.get('etag');
  assert.ok(etag, 'an ETag');
  const flags = Object.fromEntries((await first.json()).flags.map((f) => [f.key, f]));
  assert.deepEqual([flags['ft-rule'].value, flags['ft-rule'].reason], [false, 'TARGETING_MATCH']);
  assert.equal((await bulk({ 'If-None-Match': etag })).status, 304);

  await OpenFeature.close();
  result({ split });
}

main().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
