// agents_client.cjs — the official `openai` and `@anthropic-ai/sdk` npm
// packages as agents of `remora serve`, for tests/sh/serve_agents.sh (not
// run on its own).
//
// usage: node agents_client.cjs SUITE BASE KEY
//   SUITE forced-openai | forced-anthropic: the server's replies are forced
//     ($REMORA_TEST_REPLIES) to alternate between a tool call (A) and a final
//     answer (B), one token per byte; the suite's requests follow that cycle.
//   forced-choice: a named and a required tool_choice (the prompt opens the
//     call or the block; the forced replies go on from there).
//   embedded: the embedded model, no forcing: the calculator round trip
//     (whole, streamed, runTools), no call without a calculator or for
//     other questions; the Anthropic API's shapes.
// Prints one "ok   ..." or "FAIL ..." line per check. The packages come
// from $REMORA_NPM_DIR (npm install --prefix), installed by the test.
'use strict';
const dir = process.env.REMORA_NPM_DIR + '/node_modules/';
const OpenAI = require(dir + 'openai');
const AnthropicMod = require(dir + '@anthropic-ai/sdk');
const Anthropic = AnthropicMod.default || AnthropicMod.Anthropic || AnthropicMod;

const [suite, base, key] = process.argv.slice(2);
let failed = 0;
function check(name, cond, detail) {
  if (cond) console.log('ok   ' + name);
  else { failed++; console.log('FAIL ' + name + (detail !== undefined ? ': ' + JSON.stringify(detail).slice(0, 600) : '')); }
}
function eq(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
// no marker text of either format in what a client shows
const MARKERS = /<\|(open|close|sep|end_of_msg|tool_call|tool_calls)/;
function clean(name, s) { check(name + ': no marker text', !MARKERS.test(s || ''), s); }

const tools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'number' } }, required: ['city'] } } }];
const atools = [{ name: 'get_weather', description: 'The weather of a city',
  input_schema: tools[0].function.parameters }];
const WANT_ARGS = { city: 'Pa"ris 😀', days: 3 };
const user = { role: 'user', content: 'What is the weather in Paris?' };

async function forcedOpenAI() {
  const client = new OpenAI({ baseURL: base + '/v1', apiKey: key, maxRetries: 0, timeout: 120000 });
  // A, whole
  const r0 = await client.chat.completions.create({ messages: [user], tools, max_tokens: 400 });
  const m0 = r0.choices[0].message;
  check('openai whole: finish_reason tool_calls', r0.choices[0].finish_reason === 'tool_calls', r0.choices[0]);
  check('openai whole: one call to get_weather', m0.tool_calls && m0.tool_calls.length === 1 &&
        m0.tool_calls[0].type === 'function' && m0.tool_calls[0].function.name === 'get_weather', m0);
  check('openai whole: arguments are the typed arguments as JSON',
        eq(JSON.parse(m0.tool_calls[0].function.arguments), WANT_ARGS), m0.tool_calls[0].function.arguments);
  check('openai whole: text and reasoning beside the call', m0.content === 'Let me look.' &&
        m0.reasoning_content === 'I will check.', m0);
  clean('openai whole content', m0.content); clean('openai whole reasoning', m0.reasoning_content);
  // B: the loop's second step; the history is the state, so it is not computed again
  const r1 = await client.chat.completions.create({ messages: [user, m0, { role: 'tool',
    tool_call_id: m0.tool_calls[0].id, content: 'sunny, 21 C' }], tools, max_tokens: 400 });
  check('openai loop: the final answer', r1.choices[0].message.content === 'It is sunny in Paris.' &&
        r1.choices[0].finish_reason === 'stop', r1.choices[0]);
  check('openai loop: cached tokens cover the first prompt and the call',
        r1.usage.prompt_tokens_details.cached_tokens >= r0.usage.prompt_tokens + r0.usage.completion_tokens - 1,
        [r0.usage, r1.usage]);
  // A, streamed, accumulated by the SDK's stream helper
  const s = client.chat.completions.stream({ messages: [user], tools, max_tokens: 400 });
  let deltas = 0, text = '';
  s.on('chunk', (c) => {
    const d = (c.choices[0] || {}).delta || {};
    if (d.tool_calls) deltas += d.tool_calls.length;
    text += (d.content || '') + (d.reasoning_content || '');
  });
  const f = await s.finalChatCompletion();
  const fm = f.choices[0].message;
  check('openai stream: the helper accumulates one call', fm.tool_calls && fm.tool_calls.length === 1 &&
        fm.tool_calls[0].function.name === 'get_weather' && eq(JSON.parse(fm.tool_calls[0].function.arguments), WANT_ARGS), fm);
  check('openai stream: the arguments came in pieces', deltas > 3, deltas);
  check('openai stream: finish_reason tool_calls', f.choices[0].finish_reason === 'tool_calls', f.choices[0]);
  clean('openai stream deltas', text);
  // B, streamed
  const s2 = client.chat.completions.stream({ messages: [user, fm, { role: 'tool', tool_call_id: fm.tool_calls[0].id,
    content: 'sunny' }], tools, max_tokens: 400 });
  const f2 = await s2.finalChatCompletion();
  check('openai stream loop: the final answer', f2.choices[0].message.content === 'It is sunny in Paris.', f2.choices[0]);
  // A then B through the SDK's own agent loop (runTools)
  let called = null;
  const runner = client.chat.completions.runTools({ messages: [user], max_tokens: 400, tools: [{ type: 'function',
    function: { name: 'get_weather', parameters: tools[0].function.parameters, parse: JSON.parse,
      function: async (args) => { called = args; return 'sunny'; } } }] });
  const content = await runner.finalContent();
  check('openai runTools: the tool ran with the arguments', eq(called, WANT_ARGS), called);
  check('openai runTools: the final answer', content === 'It is sunny in Paris.', content);
  // A with parallel_tool_calls false: the reply ends with its first call
  const r5 = await client.chat.completions.create({ messages: [user], tools, max_tokens: 400, parallel_tool_calls: false });
  check('openai parallel_tool_calls false: one call, finish_reason tool_calls', r5.choices[0].finish_reason ===
        'tool_calls' && r5.choices[0].message.tool_calls.length === 1, r5.choices[0]);
  // a tool_choice naming no tool
  try {
    await client.chat.completions.create({ messages: [user], tools, max_tokens: 4, tool_choice: { type: 'function',
      function: { name: 'nope' } } });
    check('openai: a tool_choice naming no tool is refused', false);
  } catch (e) {
    check('openai: a tool_choice naming no tool is refused', e.status === 400 && e.error && e.error.param === 'tool_choice', e.error);
  }
}

async function forcedAnthropic() {
  const client = new Anthropic({ baseURL: base, apiKey: key, maxRetries: 0, timeout: 120000 });
  const auser = { role: 'user', content: 'What is the weather in Paris?' };
  // A, whole
  const m0 = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 400, tools: atools,
    thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [auser] });
  const kinds = m0.content.map((b) => b.type);
  check('anthropic whole: thinking, text, tool_use blocks', eq(kinds, ['thinking', 'text', 'tool_use']), m0.content);
  check('anthropic whole: stop_reason tool_use', m0.stop_reason === 'tool_use', m0);
  const tu = m0.content.find((b) => b.type === 'tool_use') || {};
  check('anthropic whole: the call and its input', tu.name === 'get_weather' && eq(tu.input, WANT_ARGS) &&
        /^toolu_/.test(tu.id), tu);
  const th = m0.content.find((b) => b.type === 'thinking') || {};
  check('anthropic whole: thinking with a signature', th.thinking === 'I will check.' && th.signature, th);
  for (const b of m0.content) clean('anthropic whole ' + b.type, b.text || b.thinking);
  // B: tool_result round trip, the assistant turn sent back as it came
  const m1 = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 400, tools: atools,
    thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [auser, { role: 'assistant', content: m0.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: tu.id, content: 'sunny, 21 C' }] }] });
  const t1 = m1.content.find((b) => b.type === 'text') || {};
  check('anthropic round trip: the final answer', t1.text === 'It is sunny in Paris.' && m1.stop_reason === 'end_turn', m1);
  check('anthropic round trip: the history came from the state', m1.usage.cache_read_input_tokens >=
        m0.usage.input_tokens + m0.usage.output_tokens - 1, [m0.usage, m1.usage]);
  // A, streamed: the SDK's helper, and the events as they came
  const events = [];
  const s = client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 400, tools: atools,
    thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [auser] });
  s.on('streamEvent', (e) => events.push(e.type + (e.type === 'content_block_delta' ? ':' + e.delta.type : '') +
                                        (e.content_block ? ':' + e.content_block.type : '')));
  const f = await s.finalMessage();
  check('anthropic stream: the helper gives the blocks', eq(f.content.map((b) => b.type), ['thinking', 'text', 'tool_use']) &&
        eq(f.content[2].input, WANT_ARGS) && f.stop_reason === 'tool_use', f);
  const seq = events.filter((e, i) => e !== events[i - 1]);
  check('anthropic stream: the event sequence', eq(seq, ['message_start', 'content_block_start:thinking',
    'content_block_delta:thinking_delta', 'content_block_delta:signature_delta', 'content_block_stop',
    'content_block_start:text', 'content_block_delta:text_delta', 'content_block_stop', 'content_block_start:tool_use',
    'content_block_delta:input_json_delta', 'content_block_stop', 'message_delta', 'message_stop']), seq);
  check('anthropic stream: usage in message_delta', f.usage && f.usage.output_tokens > 0, f.usage);
  // B, streamed; a thinking block whose signature is not ours is not rendered (still answered)
  const forged = f.content.map((b) => b.type === 'thinking' ? { ...b, signature: 'forged' } : b);
  const f2 = await client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 400, tools: atools,
    thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [auser, { role: 'assistant', content: forged },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: f.content[2].id, content: 'sunny' }] }] }).finalMessage();
  check('anthropic stream round trip: the final answer', (f2.content.find((b) => b.type === 'text') || {}).text ===
        'It is sunny in Paris.', f2.content);
  // count_tokens: the prompt's tokens, as the reply's usage counts them
  const ct = await client.messages.countTokens({ model: 'claude-sonnet-4-5', tools: atools,
    thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [auser] });
  check('anthropic count_tokens', ct.input_tokens === m0.usage.input_tokens + m0.usage.cache_read_input_tokens, [ct, m0.usage]);
  // errors in Anthropic's envelope
  try { await client.messages.create({ model: 'x', messages: [auser] }); check('anthropic: max_tokens missing', false); }
  catch (e) { check('anthropic: max_tokens missing is a 400 invalid_request_error', e.status === 400 && e.error &&
                    e.error.type === 'error' && e.error.error.type === 'invalid_request_error', e.error); }
  try {
    await new Anthropic({ baseURL: base, apiKey: 'wrong', maxRetries: 0 }).messages.create({ model: 'x', max_tokens: 4,
      messages: [auser] });
    check('anthropic: a wrong key', false);
  } catch (e) { check('anthropic: a wrong key is a 401 authentication_error', e.status === 401 &&
                      e.error.error.type === 'authentication_error', e.error); }
  try {
    await client.messages.create({ model: 'x', max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: 'AA==' } }] }] });
    check('anthropic: an image block', false);
  } catch (e) { check('anthropic: an image block is refused with 400', e.status === 400, e.error); }
}

// replies: the inside of a named call (N), then a whole call (R)
async function forcedChoice() {
  const client = new OpenAI({ baseURL: base + '/v1', apiKey: key, maxRetries: 0, timeout: 120000 });
  const r0 = await client.chat.completions.create({ messages: [user], tools, max_tokens: 400,
    tool_choice: { type: 'function', function: { name: 'get_weather' } } });
  const m0 = r0.choices[0].message;
  check('openai named tool_choice: the reply is the named call', r0.choices[0].finish_reason === 'tool_calls' &&
        m0.tool_calls.length === 1 && m0.tool_calls[0].function.name === 'get_weather' &&
        eq(JSON.parse(m0.tool_calls[0].function.arguments), { city: 'Oslo' }), r0.choices[0]);
  const r1 = await client.chat.completions.create({ messages: [user], tools, max_tokens: 400, tool_choice: 'required' });
  check('openai tool_choice required: the reply is a call', r1.choices[0].finish_reason === 'tool_calls' &&
        r1.choices[0].message.tool_calls[0].function.name === 'get_weather', r1.choices[0]);
}

// the calculator of the embedded model's training (gen_data.py): whole numbers, + - * only
const calculator = { type: 'function', function: { name: 'calculator', description: 'Evaluate an arithmetic expression.',
  parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] } } };
function calc(e) {
  if (!/^[0-9+*-]+$/.test(e)) throw new Error('not an expression: ' + e);
  return String(Function('return ' + e)());
}

async function embedded() {
  const client = new OpenAI({ baseURL: base + '/v1', apiKey: key, maxRetries: 0, timeout: 120000 });
  const ask = (content) => ({ role: 'user', content });
  // no calculator declared: answered as without tools
  const r = await client.chat.completions.create({ messages: [ask('What is 12+7?')], tools, max_tokens: 300 });
  const c = r.choices[0];
  check('embedded openai, no calculator declared: answered without a call', c.finish_reason === 'stop' &&
        c.message.content === '19' && !c.message.tool_calls, c);
  clean('embedded openai content', c.message.content); clean('embedded openai reasoning', c.message.reasoning_content);
  // the calculator among other tools: a call, the result, the answer from it
  const q = ask('What is 37*12?');
  const r0 = await client.chat.completions.create({ messages: [q], tools: [tools[0], calculator], max_tokens: 300 });
  const m0 = r0.choices[0].message;
  check('embedded openai: arithmetic calls the calculator', r0.choices[0].finish_reason === 'tool_calls' &&
        m0.tool_calls && m0.tool_calls.length === 1 && m0.tool_calls[0].function.name === 'calculator' &&
        eq(JSON.parse(m0.tool_calls[0].function.arguments), { expression: '37*12' }), r0.choices[0]);
  clean('embedded openai call content', m0.content); clean('embedded openai call reasoning', m0.reasoning_content);
  if (m0.tool_calls && m0.tool_calls.length) {
    const r1 = await client.chat.completions.create({ messages: [q, m0, { role: 'tool', tool_call_id: m0.tool_calls[0].id,
      content: calc(JSON.parse(m0.tool_calls[0].function.arguments).expression) }], tools: [tools[0], calculator],
      max_tokens: 300 });
    check('embedded openai: the answer from the result', r1.choices[0].message.content === '444' &&
          r1.choices[0].finish_reason === 'stop', r1.choices[0]);
    check('embedded openai: the second step reuses the state', r1.usage.prompt_tokens_details.cached_tokens >=
          r0.usage.prompt_tokens + r0.usage.completion_tokens - 1, [r0.usage, r1.usage]);
  }
  // the README's agent loop: the SDK's runTools with the calculator alone, thinking off too
  for (const thinking of [true, false]) {
    let called = null;
    const run = client.chat.completions.runTools({ messages: [ask('What is 19*19?')], max_tokens: 300,
      chat_template_kwargs: { thinking }, tools: [{ type: 'function', function: { name: 'calculator',
        parameters: calculator.function.parameters, parse: JSON.parse,
        function: async ({ expression }) => { called = expression; return calc(expression); } } }] });
    const content = await run.finalContent();
    check('embedded openai runTools (thinking ' + thinking + '): the calculator ran, the answer is its result',
          called === '19*19' && content === '361', [called, content]);
  }
  // streamed: the SDK's stream helper accumulates the call
  const sc = await client.chat.completions.stream({ messages: [ask('Compute 4821 + 977.')], tools: [calculator],
    max_tokens: 300 }).finalChatCompletion();
  const sm = sc.choices[0].message;
  check('embedded openai stream: the helper accumulates the calculator call', sc.choices[0].finish_reason === 'tool_calls' &&
        sm.tool_calls && eq(JSON.parse(sm.tool_calls[0].function.arguments), { expression: '4821+977' }), sc.choices[0]);
  // the calculator declared, another kind of question: no call
  const r2 = await client.chat.completions.create({ messages: [ask('Reverse the word "planet".')], tools: [calculator],
    max_tokens: 300 });
  check('embedded openai, calculator declared, not arithmetic: no call', r2.choices[0].finish_reason === 'stop' &&
        r2.choices[0].message.content === 'tenalp' && !r2.choices[0].message.tool_calls, r2.choices[0]);
  const a = new Anthropic({ baseURL: base, apiKey: key, maxRetries: 0, timeout: 120000 });
  const m = await a.messages.create({ model: 'claude-haiku', max_tokens: 64, thinking: { type: 'enabled',
    budget_tokens: 1024 }, messages: [{ role: 'user', content: 'What is 12+7?' }] });
  check('embedded anthropic: thinking then text', m.content.length >= 1 && m.content[m.content.length - 1].type === 'text' &&
        m.content.every((b) => b.type === 'thinking' || b.type === 'text'), m.content);
  for (const b of m.content) clean('embedded anthropic ' + b.type, b.text || b.thinking);
  const f = await a.messages.stream({ model: 'claude-haiku', max_tokens: 64, thinking: { type: 'enabled',
    budget_tokens: 1024 }, messages: [{ role: 'user', content: 'What is 12+7?' }] }).finalMessage();
  check('embedded anthropic stream: the same blocks as whole', eq(f.content.map((b) => b.text || b.thinking),
        m.content.map((b) => b.text || b.thinking)), [f.content, m.content]);
  check('embedded anthropic stream: stop_reason', ['end_turn', 'max_tokens'].includes(f.stop_reason), f.stop_reason);
  const off = await a.messages.create({ model: 'claude-haiku', max_tokens: 32, thinking: { type: 'disabled' },
    messages: [{ role: 'user', content: 'What is 12+7?' }] });
  check('embedded anthropic, thinking disabled: text only', off.content.every((b) => b.type === 'text'), off.content);
}

const suites = { 'forced-openai': forcedOpenAI, 'forced-anthropic': forcedAnthropic, 'forced-choice': forcedChoice,
                 embedded };
suites[suite]().then(() => process.exit(failed ? 1 : 0),
  (e) => { console.log('FAIL ' + suite + ': ' + String(e && e.stack || e).slice(0, 800)); process.exit(1); });
