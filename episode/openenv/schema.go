package openenv

// schemaJSON is GET /schema: OpenEnv's SchemaResponse, the JSON Schemas
// of the actions, observations and states of toolenv's episodes.
const schemaJSON = `{"action":{"title":"ToolenvAction","description":"One step: OpenEnv's MCP actions (call_tool, list_tools) or toolenv's (tool_calls, final_answer). A call_tool of submit_answer is a final_answer.","oneOf":[
{"type":"object","title":"CallToolAction","properties":{"type":{"const":"call_tool"},"tool_name":{"type":"string"},"arguments":{"type":"object"},"label":{"type":"string","description":"the label the result is stored under (SLOT/SEL tools; later calls write $LABEL$)"},"metadata":{"type":"object"}},"required":["tool_name"],"additionalProperties":false},
{"type":"object","title":"ListToolsAction","properties":{"type":{"const":"list_tools"},"metadata":{"type":"object"}},"required":["type"],"additionalProperties":false},
{"type":"object","title":"ToolCallsAction","properties":{"type":{"const":"tool_calls"},"calls":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"},"arguments":{"type":"object"},"label":{"type":"string"}},"required":["name"]}},"tool_calls":{"type":"array","description":"OpenAI's tool_calls, as a chat completion returns them","items":{"type":"object","properties":{"id":{"type":"string"},"type":{"const":"function"},"function":{"type":"object","properties":{"name":{"type":"string"},"arguments":{"type":"string"}},"required":["name"]}}}},"metadata":{"type":"object"}},"required":["type"],"additionalProperties":false},
{"type":"object","title":"FinalAnswerAction","properties":{"type":{"const":"final_answer"},"answer":{"description":"a table {columns, rows}, a list of rows, a value, or a text"},"labels":{"type":"array","items":{"type":"string"}},"text":{"type":"string"},"metadata":{"type":"object"}},"required":["type"],"additionalProperties":false}]},
"observation":{"title":"ToolenvObservation","type":"object","properties":{
"episode_id":{"type":"string"},"step":{"type":"integer"},
"task_id":{"type":"string"},"collection":{"type":"string"},"query":{"type":"string"},"instructions":{"type":"string"},"tool_format":{"enum":["openai","mcp"]},"max_steps":{"type":"integer"},
"tools":{"type":"array","description":"the tools offered: OpenAI function JSON or MCP tool definitions (reset), OpenEnv's Tool {name, description, input_schema} (list_tools)"},
"tool_name":{"type":"string"},"result":{"$ref":"#/$defs/CallResult"},"error":{"$ref":"#/$defs/ToolError"},
"results":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"tool_name":{"type":"string"},"result":{"$ref":"#/$defs/CallResult"},"error":{"$ref":"#/$defs/ToolError"}}}},
"outcome":{"type":"object","description":"how the episode ended, measured (last step)"}},
"$defs":{"CallResult":{"type":"object","properties":{"content":{"type":"array"},"structured_content":{"type":"object"},"is_error":{"type":"boolean"},"data":{},"status":{"type":"string"},"label":{"type":"string"},"faults":{"type":"array","items":{"type":"string"}}}},
"ToolError":{"type":["object","null"],"properties":{"error_type":{"enum":["execution_error","invalid_args","tool_not_found","timeout","transport_error"]},"message":{"type":"string"}}}}},
"state":{"title":"ToolenvState","type":"object","properties":{"episode_id":{"type":["string","null"]},"step_count":{"type":"integer","minimum":0},"done":{"type":"boolean"},"truncated":{"type":"boolean"},"collection":{"type":"string"},"task_id":{"type":"string"},"seed":{"type":"integer"},"return":{"type":"number"},"calls":{"type":"integer"},"max_steps":{"type":"integer"},"reward":{"type":"object"},"success_kind":{"type":"string"},"outcome":{"type":"object"},"client_episode_id":{"type":"string"}},"additionalProperties":true}}
`
