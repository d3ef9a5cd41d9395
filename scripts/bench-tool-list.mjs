// What every MCP client pays for devlens' tool list, measured with the official MCP TypeScript
// SDK (@modelcontextprotocol/sdk) over stdio. scripts/bench-tool-list installs the SDK and runs
// this with --sdk pointing at the node_modules folder that holds it.
//
//   node bench-tool-list.mjs --sdk DIR --bin DEVLENS [--runs 15] [--args "serve …"] [--dump FILE]
//
// Each run is a fresh Node process (a client starting cold, as an agent's client does) with a
// fresh `devlens serve`: connect() is spawn + initialize, listTools() is tools/list with what the
// SDK does to the answer (Zod parsing, Ajv compiling every outputSchema). Prints the medians,
// their ratio, the tool count and the bytes of the definitions as a markdown table; --json prints
// the figures as JSON instead.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function parseArgs(argv) {
    const options = { runs: 15, args: 'serve', json: false };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const next = () => {
            if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
            return argv[++i];
        };
        if (a === '--sdk') options.sdk = resolve(next());
        else if (a === '--bin') options.bin = resolve(next());
        else if (a === '--runs') options.runs = Number(next());
        else if (a === '--args') options.args = next();
        else if (a === '--dump') options.dump = resolve(next());
        else if (a === '--json') options.json = true;
        else if (a === '--once') options.once = true;
        else throw new Error(`unknown argument ${a}`);
    }
    if (!options.sdk || !options.bin) throw new Error('--sdk DIR and --bin DEVLENS are required');
    if (!(options.runs >= 1)) throw new Error('--runs must be a positive number');
    return options;
}

const bytes = (value) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** One cold client against one fresh server: the timings, and the tools/list answer. */
async function once(options) {
    const sdk = (path) => import(pathToFileURL(join(options.sdk, '@modelcontextprotocol/sdk/dist/esm', path)).href);
    const { Client } = await sdk('client/index.js');
    const { StdioClientTransport } = await sdk('client/stdio.js');
    const scratch = mkdtempSync(join(tmpdir(), 'devlens-bench-tool-list-'));
    const workspace = join(scratch, 'workspace');
    mkdirSync(workspace);
    const env = { ...process.env, DEVLENS_DATA_DIR: join(scratch, 'data') };
    for (const key of ['DEVLENS_PROJECT', 'PROJECT_NAME', 'DEVLENS_TOOLS', 'DEVLENS_DYNAMIC_TOOLS',
        'DEVLENS_CONFIG', 'DEVLENS_PROJECTS_FILE', 'DEVLENS_WORKSPACE', 'DEVLENS_SERVER']) {
        delete env[key];
    }
    try {
        const transport = new StdioClientTransport({
            command: options.bin,
            args: [...options.args.split(' ').filter(Boolean), '--workspace', workspace],
            env,
            cwd: workspace,
            stderr: 'ignore',
        });
        const client = new Client({ name: 'devlens-bench-tool-list', version: '0' });
        const started = performance.now();
        await client.connect(transport);
        const connected = performance.now();
        // The answer as it came over the wire (before the SDK's parsing), kept by reference and
        // measured after the clock stops.
        let answer;
        const deliver = transport.onmessage;
        transport.onmessage = (message, extra) => {
            if (message?.result?.tools) answer = message;
            deliver?.(message, extra);
        };
        const listed = await client.listTools();
        const done = performance.now();
        await client.close();
        const tools = answer?.result?.tools ?? listed.tools;
        return {
            connect_ms: connected - started,
            list_tools_ms: done - connected,
            tools: tools.length,
            answer_bytes: bytes(answer ?? { result: listed }),
            tools_bytes: bytes(tools),
            input_schema_bytes: tools.reduce((n, t) => n + bytes(t.inputSchema ?? {}), 0),
            output_schema_bytes: tools.reduce((n, t) => n + (t.outputSchema ? bytes(t.outputSchema) : 0), 0),
            output_schemas: tools.filter((t) => t.outputSchema).length,
            description_bytes: tools.reduce((n, t) => n + bytes(t.description ?? ''), 0),
            answer,
        };
    } finally {
        rmSync(scratch, { recursive: true, force: true });
    }
}

function median(values) {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
    const options = parseArgs(process.argv.slice(2));
    if (options.once) {
        const run = await once(options);
        if (options.dump) writeFileSync(options.dump, JSON.stringify(run.answer.result, null, 2) + '\n');
        delete run.answer;
        process.stdout.write(JSON.stringify(run) + '\n');
        return;
    }
    const runs = [];
    for (let i = 0; i < options.runs; i++) {
        const childArgs = [process.argv[1], '--once', '--sdk', options.sdk, '--bin', options.bin, '--args', options.args];
        if (i === 0 && options.dump) childArgs.push('--dump', options.dump);
        const child = spawnSync(process.execPath, childArgs, { encoding: 'utf8' });
        if (child.status !== 0) {
            throw new Error(`run ${i + 1} failed (exit ${child.status}):\n${child.stderr}${child.stdout}`);
        }
        runs.push(JSON.parse(child.stdout.trim().split('\n').pop()));
    }
    const last = runs[runs.length - 1];
    const connect = median(runs.map((r) => r.connect_ms));
    const listTools = median(runs.map((r) => r.list_tools_ms));
    const figures = {
        binary: options.bin,
        args: options.args,
        runs: runs.length,
        median_connect_ms: Number(connect.toFixed(1)),
        median_list_tools_ms: Number(listTools.toFixed(1)),
        ratio: Number((listTools / connect).toFixed(2)),
        tools: last.tools,
        answer_bytes: last.answer_bytes,
        tools_bytes: last.tools_bytes,
        input_schema_bytes: last.input_schema_bytes,
        output_schema_bytes: last.output_schema_bytes,
        output_schemas: last.output_schemas,
        description_bytes: last.description_bytes,
    };
    if (options.json) {
        process.stdout.write(JSON.stringify(figures, null, 2) + '\n');
        return;
    }
    const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
    const rows = [
        ['runs (fresh client + server each)', String(figures.runs)],
        ['median connect()', `${figures.median_connect_ms} ms`],
        ['median listTools()', `${figures.median_list_tools_ms} ms`],
        ['listTools / connect', `${figures.ratio}×`],
        ['tools', String(figures.tools)],
        ['tools/list answer', kb(figures.answer_bytes)],
        ['input schemas', kb(figures.input_schema_bytes)],
        [`output schemas (${figures.output_schemas} tools)`, kb(figures.output_schema_bytes)],
        ['tool descriptions', kb(figures.description_bytes)],
    ];
    process.stdout.write(`devlens ${options.args} (${options.bin})\n\n| | |\n| --- | --- |\n`);
    for (const [name, value] of rows) process.stdout.write(`| ${name} | ${value} |\n`);
}

main().catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
});
