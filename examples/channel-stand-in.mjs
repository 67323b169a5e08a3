// A local stand-in for Slack, Microsoft Teams or PagerDuty: it prints what edgewatch posts and answers as the
// vendor does (Slack 200 "ok", Teams and PagerDuty 202), so a channel can be tried without an account.
//   KIND=slack|msteams|pagerduty  PORT=9444  TLS_CERT=cert.pem TLS_KEY=key.pem  node examples/channel-stand-in.mjs
import { readFileSync } from 'node:fs';
import https from 'node:https';

const kind = process.env.KIND ?? 'slack';
const port = Number(process.env.PORT ?? 9444);
const answers = {
  slack: [200, 'text/plain', 'ok'],
  msteams: [202, 'text/plain', ''],
  pagerduty: [202, 'application/json', '{"status":"success","message":"Event processed"}'],
};
const [status, type, body] = answers[kind] ?? answers.slack;

const server = https.createServer(
  { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) },
  async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    let shown = text;
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not JSON: shown as it came.
    }
    console.log(`${req.method} ${req.url}\n${shown}`);
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  },
);
server.listen(port, () => console.log(`${kind} stand-in listening on port ${port}`));
