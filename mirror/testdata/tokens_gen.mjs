// Generates mirror/testdata/tokens.json: reference token counts of sample
// texts by OpenAI's cl100k_base and o200k_base, with the npm package
// gpt-tokenizer (v2). Run: npm install gpt-tokenizer@2 && node gen.mjs IN OUT
import fs from 'fs';
import { encode as c100 } from 'gpt-tokenizer/encoding/cl100k_base';
import { encode as o200 } from 'gpt-tokenizer/encoding/o200k_base';
const [,, input, output] = process.argv;
const items = JSON.parse(fs.readFileSync(input)).map(x => ({...x, cl100k_base: c100(x.text).length, o200k_base: o200(x.text).length}));
fs.writeFileSync(output, JSON.stringify(items, null, 1) + '\n');
