// Shared by the test scripts: configuration from the Go test, a call to
// Bunting's management API, and small helpers.
'use strict';

const config = {
  url: process.env.BUNTING_URL,
  serverSecret: process.env.SERVER_SECRET,
  clientSecret: process.env.CLIENT_SECRET,
  unknownSecret: process.env.UNKNOWN_SECRET,
  apiAuth: process.env.API_AUTH,
  envId: process.env.ENV_ID,
  splitUsers: (process.env.SPLIT_USERS || '').split(',').filter(Boolean),
};
for (const [k, v] of Object.entries(config)) {
  if (v === undefined || v === '') throw new Error(`missing configuration ${k}`);
}
// The management API is Bunting's own; the SDKs may connect elsewhere (a
// relay, API_URL being the Bunting it syncs from).
config.apiUrl = process.env.API_URL || config.url;

// api calls Bunting's management API and returns the envelope's data.
async function api(method, path, body) {
  const res = await fetch(config.apiUrl + '/api/v1' + path, {
    method,
    headers: { 'Content-Type': 'application/json', Authorization: config.apiAuth },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const env = await res.json();
  if (!res.ok || !env.success) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(env)}`);
  return env.data;
}

// toggle turns a flag off or on through the API.
const toggle = (key, on) => api('PUT', `/envs/${config.envId}/feature-flags/${key}/toggle/${on}`, {});

// changeSeen makes a change and resolves with the milliseconds from its
// start until seen resolves, rejecting if that takes longer than ms. The
// scripts give a generous ms: that the change is pushed is the check, how
// fast is reported (pushMs) rather than asserted, since a loaded test machine
// is no measure of speed (the benchmark is).
async function changeSeen(ms, what, seen, change) {
  const start = Date.now();
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([Promise.all([change(), seen]), timeout]);
    return Date.now() - start;
  } finally {
    clearTimeout(timer);
  }
}

// result prints what the Go test checks on its side.
const result = (data) => console.log('RESULT ' + JSON.stringify(data));

module.exports = { config, api, toggle, changeSeen, result };
