// @featbit/node-server-sdk 1.3.0 against Bunting: every kind of fixture flag,
// insight events, a change pushed, polling mode, and refused
// secrets.
'use strict';
const assert = require('node:assert/strict');
const { FbClientBuilder, UserBuilder, DataSyncModeEnum } = require('@featbit/node-server-sdk');
const { config, api, toggle, changeSeen, result } = require('./common');

const build = (secret) => new FbClientBuilder()
  .sdkKey(secret)
  .streamingUri(config.url)
  .eventsUri(config.url)
  .startWaitTime(3000)
  .flushInterval(200)
  .logLevel('error')
  .build();

async function main() {
  const client = build(config.serverSecret);
  await client.waitForInitialization();
  const user = (key, props = {}) => {
    const b = new UserBuilder(key);
    for (const [k, v] of Object.entries(props)) b.custom(k, v);
    return b.build();
  };
  const expect = async (what, detail, value, kind) => {
    const d = await detail;
    assert.deepEqual([d.value, d.kind], [value, kind], `${what}: ${JSON.stringify(d)}`);
  };
  await expect('ft-bool', client.boolVariationDetail('ft-bool', user('u1'), false), true, 'FallThrough');
  await expect('ft-off', client.boolVariationDetail('ft-off', user('u1'), true), false, 'Off');
  await expect('ft-target', client.boolVariationDetail('ft-target', user('u-false'), true), false, 'TargetMatch');
  await expect('ft-rule us', client.boolVariationDetail('ft-rule', user('u1', { country: 'us' }), true), false, 'RuleMatch');
  await expect('ft-rule', client.boolVariationDetail('ft-rule', user('u1'), false), true, 'FallThrough');
  await expect('ft-seg', client.boolVariationDetail('ft-seg', user('u-seg'), true), false, 'RuleMatch');
  await expect('unknown', client.boolVariationDetail('no-such-flag', user('u1'), true), true, 'FlagNotFound');
  await expect('wrong type', client.numberVariationDetail('ft-bool', user('u1'), 7), 7, 'WrongType');
  assert.equal(await client.stringVariation('ft-string', user('u1'), ''), 'blue');
  assert.equal(await client.numberVariation('ft-number', user('u1'), 0), 10);
  assert.deepEqual(await client.jsonVariation('ft-json', user('u1'), {}), { limit: 5, tags: ['a'] });

  const split = [];
  for (const key of config.splitUsers) split.push(await client.boolVariation('ft-split', user(key), false));

  // Events: evaluations above, a metric, flushed to /api/public/insight/track.
  // An experiment runs on ft-bool: u1's evaluation is an exposure, the
  // track() a conversion worth 2.
  client.track(user('u1'), 'purchase', 2);
  await client.flush();
  let insight;
  for (let i = 0; i < 30; i++) {
    insight = await api('GET', `/envs/${config.envId}/feature-flags/ft-bool/insights`);
    if (insight.evaluations > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(insight.evaluations > 0, `no evaluations recorded: ${JSON.stringify(insight)}`);

  // A change made through the API reaches the SDK by a push (its latency is reported).
  const updated = new Promise((resolve) => client.on('update:ft-bool', resolve));
  const pushMs = await changeSeen(10000, 'update:ft-bool', updated, () => toggle('ft-bool', false));
  assert.equal(await client.boolVariation('ft-bool', user('u1'), true), false);
  await client.close();

  // Polling mode reads the same data from /api/public/sdk/server/latest-all.
  const polling = new FbClientBuilder().sdkKey(config.serverSecret).dataSyncMode(DataSyncModeEnum.POLLING)
    .pollingUri(config.url).pollingInterval(500).eventsUri(config.url).disableEvents(true)
    .startWaitTime(3000).logLevel('error').build();
  await polling.waitForInitialization();
  await expect('polling ft-bool', polling.boolVariationDetail('ft-bool', user('u1'), true), false, 'Off');
  await expect('polling ft-seg', polling.boolVariationDetail('ft-seg', user('u-seg'), true), false, 'RuleMatch');
  await polling.close();

  // A well-formed but unknown secret, and a client secret, are refused (4003).
  for (const secret of [config.unknownSecret, config.clientSecret]) {
    const refused = new FbClientBuilder().sdkKey(secret).streamingUri(config.url).eventsUri(config.url)
      .startWaitTime(1000).disableEvents(true).logLevel('none').build();
    await assert.rejects(refused.waitForInitialization());
    await refused.close();
  }
  result({ split, pushMs, evaluations: insight.evaluations });
}

main().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
