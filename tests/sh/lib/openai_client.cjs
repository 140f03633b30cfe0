// openai_client.cjs — the official `openai` npm package as a client of
// `remora serve`, for tests/sh/serve_openai.sh (not run on its own).
//
// usage: node openai_client.cjs MODE 'JSON'
//   MODE chat | completion: one request; JSON has base, key, and the
//     request's fields (messages or prompt, max_tokens, stream, ...);
//     "abort_after": N stops a stream after N chunks that carry text.
// Prints one JSON line: {reasoning, content, text, finish, usage, ids,
// chunks, kinds} or, when the request fails, {error: {status, type, code,
// param, message, retry_after}}. The package comes from the folder in
// $REMORA_OPENAI_DIR (npm install --prefix), installed by the test.
'use strict';
const OpenAI = require(process.env.REMORA_OPENAI_DIR + '/node_modules/openai');

async function main() {
  const mode = process.argv[2];
  const spec = JSON.parse(process.argv[3]);
  const { base, key, abort_after, ...body } = spec;
  const client = new OpenAI({ baseURL: base, apiKey: key || 'none', maxRetries: 0, timeout: 120000 });
  const api = mode === 'chat' ? client.chat.completions : client.completions;
  const out = { reasoning: '', content: '', text: '', finish: null, usage: null, ids: [], chunks: 0, kinds: {} };
  try {
    if (!body.stream) {
      const r = await api.create(body);
      const c = r.choices[0];
      if (mode === 'chat') {
        out.content = c.message.content || '';
        out.reasoning = c.message.reasoning_content || '';
      } else {
        out.text = c.text;
      }
      out.finish = c.finish_reason;
      out.usage = r.usage;
      out.model = r.model;
      out.object = r.object;
    } else {
      const stream = await api.create(body);
      let texts = 0;
      for await (const chunk of stream) {
        out.chunks++;
        if (chunk.remora) {
          out.kinds[chunk.remora.kind] = (out.kinds[chunk.remora.kind] || 0) + 1;
          if (chunk.remora.kind === 'token') out.ids.push(chunk.remora.token_id);
        }
        if (chunk.usage) out.usage = chunk.usage;
        const c = chunk.choices[0];
        if (!c) continue;
        const d = c.delta || {};
        if (d.reasoning_content) out.reasoning += d.reasoning_content;
        if (d.content) out.content += d.content;
        if (c.text) out.text += c.text;
        if (c.finish_reason) out.finish = c.finish_reason;
        if (d.reasoning_content || d.content || c.text) texts++;
        if (abort_after && texts >= abort_after) {
          stream.controller.abort();
          out.aborted = true;
          break;
        }
      }
    }
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) throw e;
    const err = e.error || {};
    out.error = { status: e.status, type: err.type, code: err.code, param: err.param, message: err.message,
                  retry_after: e.headers && e.headers.get ? e.headers.get('retry-after') : null };
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
