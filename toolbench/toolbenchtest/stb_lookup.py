"""StableToolBench's cache lookup, run on a cache folder, for toolenv's tests.

Written for toolenv; it performs what StableToolBench's server does before it
calls any API, following THUNLP-MT/StableToolBench:

  server/main.py at commit 9fd0a3c7d507bae7d4d11d9f85f708ee04b001da:
    prepare_tool_name_and_url (the category, tool and API names of a /virtual
    request → the cache file <cache>/<category>/<tool>_for_<category>/<api>.json)
    and get_virtual_response (tool_input json.loads-ed when it is a string,
    {} when it is "", taken as is when it is a dict; the file json.load-ed;
    the key str(tool_input); a hit when that key is in the file);
  server/utils.py at commit 08ea700e07a53cfaf31fd7b222e823ff651619a4:
    standardize and change_name.

usage: python3 stb_lookup.py < JOB.json
JOB.json is {"cache": DIR, "requests": [{"category", "tool_name", "api_name",
"tool_input"}, ...]}. It prints one result per request:
{"hit": bool, "file": the file looked in, "key": str(tool_input),
"value": the cached {"error", "response"} (NaN and infinities as null),
"nonfinite": whether the value held any, "problem": why there was no lookup}.
"""
import json
import math
import os
import re
import sys


def standardize(string):
    string = re.sub("[^\\u4e00-\\u9fa5^a-z^A-Z^0-9^_]", "_", string)
    string = re.sub(r"(_)\1+", "_", string).lower()
    string = string.strip("_")
    if string and string[0].isdigit():
        string = "get_" + string
    return string


def change_name(name):
    if name in ["from", "class", "return", "false", "true", "id", "and"]:
        return "is_" + name
    return name


def cache_file(cache, category, tool_name, api_name):
    cat = category.replace(" ", "_").replace(",", "_").replace("/", "_")
    while " " in cat or "," in cat:
        cat = cat.replace(" ", "_").replace(",", "_")
    cat = cat.replace("__", "_")
    api = change_name(standardize(api_name)).split("_for_" + tool_name)[0]
    if not tool_name.endswith("_for_" + cat):
        tool_name = standardize(tool_name) + "_for_" + cat
    return os.path.join(cache, cat, tool_name, api + ".json")


def finite(v):
    """v with NaN and infinities as None, and whether it held any."""
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None, True
    if isinstance(v, dict):
        out, any_nf = {}, False
        for k, e in v.items():
            out[k], nf = finite(e)
            any_nf = any_nf or nf
        return out, any_nf
    if isinstance(v, list):
        out, any_nf = [], False
        for e in v:
            fe, nf = finite(e)
            out.append(fe)
            any_nf = any_nf or nf
        return out, any_nf
    return v, False


def lookup(cache, req):
    path = cache_file(cache, req["category"], req["tool_name"], req["api_name"])
    tool_input = req["tool_input"]
    if isinstance(tool_input, str):
        try:
            tool_input = json.loads(tool_input)
        except Exception:
            if tool_input == "":
                tool_input = {}
            else:
                return {"hit": False, "file": path, "problem": "tool input parse error"}
    key = str(tool_input)
    if not os.path.exists(path):
        return {"hit": False, "file": path, "key": key, "problem": "no such file"}
    try:
        with open(path) as f:
            cache_record = json.load(f)
    except Exception as e:
        return {"hit": False, "file": path, "key": key, "problem": "Loading cache error: %s" % e}
    if key not in cache_record:
        return {"hit": False, "file": path, "key": key}
    value, nonfinite = finite(cache_record[key])
    return {"hit": True, "file": path, "key": key, "value": value, "nonfinite": nonfinite}


job = json.load(sys.stdin)
print(json.dumps([lookup(job["cache"], r) for r in job["requests"]]))
