// @featbit/js-client-sdk against Bunting: variations evaluated by the server
// for the SDK's user, a change pushed, and identify.
// The SDK is for browsers; Node 20 gets the two browser globals it uses.
'use strict';
globalThis.WebSocket = require('ws');
const memory = new Map();
globalThis.localStorage = {
  getItem: (k) => (memory.has(k) ? memory.get(k) : null),
  setItem: (k, v) => memory.set(k, String(v)),
  removeItem: (k) => memory.delete(k),
  clear: () => memory.clear(),
};

const assert = require('node:assert/strict');
const { FbClientBuilder, UserBuilder } = require('@featbit/js-client-sdk');
const { config, toggle, changeSeen, result } = require('./common');

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} not answered within ${ms} ms`)), ms);
  })]).finally(() => clearTimeout(timer));
}

async function main() {
  const user = new UserBuilder('u-seg').name('Ann').custom('country', 'us').build();
  const client = new FbClientBuilder()
    .sdkKey(config.clientSecret)
    .streamingUri(config.url.replace(/^http/, 'ws'))
    .eventsUri(config.url)
    .user(user)
    .startWaitTime(3000)
    .logLevel('error')
    .build();
  await client.waitForInitialization();

  assert.equal(await client.boolVariation('ft-seg', true), false, 'ft-seg for a segment member');
  assert.equal(await client.boolVariation('ft-rule', true), false, 'ft-rule for country us');
  assert.equal(await client.boolVariation('ft-target', false), true, 'ft-target falls through');
  assert.equal(await client.boolVariation('ft-off', true), false, 'ft-off');
  assert.equal(await client.stringVariation('ft-string', ''), 'blue');
  assert.equal(await client.numberVariation('ft-number', 0), 10);
  assert.deepEqual(await client.jsonVariation('ft-json', {}), { limit: 5, tags: ['a'] });
  const detail = await client.boolVariationDetail('ft-rule', true);
  assert.equal(detail.value, false, JSON.stringify(detail));

  // An experiment runs on ft-bool: this evaluation is an exposure (the server
  // decided sendToExperiment) and track() a conversion worth 3.
  assert.equal(await client.boolVariation('ft-bool', false), true, 'ft-bool before the change');
  client.track('purchase', 3);
  assert.equal(await client.flush(), true, 'events flushed');

  const updated = new Promise((resolve) => client.on('update:ft-bool', resolve));
  const pushMs = await changeSeen(10000, 'update:ft-bool', updated, () => toggle('ft-bool', false));
  assert.equal(await client.boolVariation('ft-bool', true), false);

  await client.identify(new UserBuilder('u-false').name('Bob').build());
  let target;
  for (let i = 0; i < 30; i++) {
    target = await client.boolVariation('ft-target', true);
    if (target === false) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(target, false, 'ft-target for u-false after identify');

  // 30 identify() calls in a row, each waiting for its answer, faster than
  // the server answers one connection's messages: every one is answered
  // (none hangs), and the last user gets their own values.
  const burstStart = Date.now();
  for (let i = 0; i < 29; i++) {
    await withTimeout(client.identify(new UserBuilder(`u-burst-${i}`).name(`Burst ${i}`).build()), 5000, `identify #${i + 1}`);
  }
  await withTimeout(client.identify(new UserBuilder('u-last').name('Last').build()), 5000, 'identify #30');
  const identifyMs = Date.now() - burstStart;
  target = await client.boolVariation('ft-target', false);
  assert.equal(target, true, 'ft-target for u-last after a burst of identify()');
  await client.close();
  result({ pushMs, identifyMs });
}

main().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
