#!/usr/bin/python3
"""Generates the ABI comparison sources of tests/api from two header sets.

Scans our public headers (--ours) for constant macros, enum constants and
struct members, and writes:
  --table       entries {name, kind, value} for abi_table.c; the same file is
                compiled once against our headers and once against OpenPMIx's
  --names       names found in only one of the two header sets, per kind
  --signatures  C11 static assertions that each function we declare, and each
                callback typedef we define, has the type OpenPMIx 4.2.2 gives
                it (compiled against our headers only), and the functions
                declared on one side only
"""

import argparse
import os
import re

HEADERS = ["pmix_common.h", "pmix.h", "pmix_server.h", "pmix_tool.h", "pmix_version.h"]
# OpenPMIx splits its deprecated names into an extra header.
THEIR_EXTRA = ["pmix_deprecated.h"]


def read(directory, names):
    text = ""
    for name in names:
        path = os.path.join(directory, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                text += f.read() + "\n"
    return text


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def join_continuations(text):
    return re.sub(r"\\\n", " ", text)


def macros(text):
    """(object-like {name: value}, function-like {names})"""
    objects, functions = {}, set()
    for line in join_continuations(strip_comments(text)).splitlines():
        m = re.match(r"\s*#\s*define\s+(\w+)(\(?)(.*)$", line)
        if not m:
            continue
        name, paren, value = m.group(1), m.group(2), m.group(3).strip()
        if paren:
            functions.add(name)
        else:
            objects[name] = value
    return objects, functions


def comparable(name, value):
    """Object-like macros whose value the table can hold."""
    if not value or name.endswith("_H") or name == "PMIX_EXPORT":
        return False
    return not value.startswith("{")  # *_STATIC_INIT initializers


def enums(text):
    found = []
    for body in re.findall(r"typedef\s+enum\s*\w*\s*\{(.*?)\}", strip_comments(text), flags=re.S):
        for item in body.split(","):
            item = item.strip()
            if item:
                found.append(re.match(r"(\w+)", item).group(1))
    return found


def split_members(body, prefix=""):
    members = []
    depth_text = body
    # nested unions/structs: "union { ... } name;"
    for m in re.finditer(r"(?:union|struct)\s*\{(.*?)\}\s*(\w+)\s*;", depth_text, flags=re.S):
        members += split_members(m.group(1), prefix + m.group(2) + ".")
    flat = re.sub(r"(?:union|struct)\s*\{.*?\}\s*\w+\s*;", "", depth_text, flags=re.S)
    top = []
    for decl in flat.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", decl)
        top.append(prefix + m.group(1))
    if prefix:
        return members + top
    # keep declaration order for the top level: nested ones are placed where
    # their block was (good enough for reporting; offsets are checked anyway)
    return top + members


def structs(text):
    found = {}
    clean = strip_comments(text)
    for m in re.finditer(r"typedef\s+struct\s*\w*\s*\{", clean):
        start = m.end()
        depth, k = 1, start
        while depth:
            if clean[k] == "{":
                depth += 1
            elif clean[k] == "}":
                depth -= 1
            k += 1
        body = clean[start:k - 1]
        name = re.match(r"\s*(\w+)\s*;", clean[k:]).group(1)
        found[name] = split_members(body)
    return found


def typedef_names(text):
    return set(re.findall(r"\}\s*(\w+)\s*;", strip_comments(text))) | set(
        re.findall(r"typedef\s+[\w\s\*]+?\b(\w+)\s*(?:\[[^\]]*\])?\s*;", strip_comments(text))) | set(
        re.findall(r"typedef[^;]*?\(\s*\*\s*(\w+)\s*\)", strip_comments(text)))


def function_pointer_typedefs(text):
    out = {}
    for m in re.finditer(r"typedef\s+([^;{}]*?)\(\s*\*\s*(\w+)\s*\)\s*\(([^;]*?)\)\s*;", strip_comments(text), flags=re.S):
        out[m.group(2)] = (" ".join(m.group(1).split()), " ".join(m.group(3).split()))
    return out


def functions(text):
    out = {}
    for m in re.finditer(r"PMIX_EXPORT\s+([^;{}()]*?)\b(PMIx_\w+)\s*\(([^;{}]*?)\)\s*;", strip_comments(text), flags=re.S):
        out[m.group(2)] = (" ".join(m.group(1).split()), " ".join(m.group(3).split()))
    return out


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ours", required=True)
    parser.add_argument("--theirs", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--names", required=True)
    parser.add_argument("--signatures", required=True)
    args = parser.parse_args()

    ours = read(args.ours, HEADERS)
    theirs = read(args.theirs, HEADERS + THEIR_EXTRA)

    our_objects, our_functions = macros(ours)
    their_objects, their_functions = macros(theirs)
    our_enums, their_enums = enums(ours), enums(theirs)
    our_structs, their_structs = structs(ours), structs(theirs)
    our_types, their_types = typedef_names(ours), typedef_names(theirs)

    entries = []
    for name, value in our_objects.items():
        if not comparable(name, value):
            continue
        kind = "ABI_STRING" if value.startswith('"') else "ABI_INTEGER"
        if kind == "ABI_STRING":
            entries.append("#ifdef %s\n{%s, ABI_STRING, 0, 0, %s},\n#else\n{%s, ABI_ABSENT, 0, 0, 0},\n#endif"
                           % (name, c_string(name), name, c_string(name)))
        else:
            entries.append("#ifdef %s\n{%s, ABI_INTEGER, (long long)(%s), (unsigned long long)(%s), 0},\n"
                           "#else\n{%s, ABI_ABSENT, 0, 0, 0},\n#endif"
                           % (name, c_string(name), name, name, c_string(name)))
    for name in our_enums:
        if name in their_enums:
            entries.append("{%s, ABI_INTEGER, (long long)(%s), (unsigned long long)(%s), 0}," % (c_string(name), name, name))
    # Types and members of later releases exist on our side only: listed, not
    # compared (abi_test checks the lists).
    structs_only_ours, members_only_ours = set(), set()
    for struct, members in our_structs.items():
        if struct not in their_structs:
            structs_only_ours.add(struct)
            continue
        entries.append("{%s, ABI_INTEGER, (long long)sizeof(%s), sizeof(%s), 0},"
                       % (c_string("sizeof(%s)" % struct), struct, struct))
        for member in members:
            if member not in their_structs[struct]:
                members_only_ours.add("%s.%s" % (struct, member))
                continue
            entries.append("{%s, ABI_INTEGER, (long long)offsetof(%s, %s), offsetof(%s, %s), 0},"
                           % (c_string("offsetof(%s, %s)" % (struct, member)), struct, member, struct, member))
            entries.append("{%s, ABI_INTEGER, (long long)sizeof(((%s *)0)->%s), sizeof(((%s *)0)->%s), 0},"
                           % (c_string("sizeof(%s.%s)" % (struct, member)), struct, member, struct, member))
    with open(args.table, "w") as f:
        f.write("/* generated by tests/api/gen_abi.py */\n" + "\n".join(entries) + "\n")

    def name_list(var, names):
        body = "".join("    %s,\n" % c_string(n) for n in sorted(names))
        return "static const char *const %s[] = {\n%s    0};\n" % (var, body)

    our_constants = {n for n, v in our_objects.items() if comparable(n, v)} | set(our_enums)
    their_constants = {n for n, v in their_objects.items() if comparable(n, v)} | set(their_enums)
    with open(args.names, "w") as f:
        f.write("/* generated by tests/api/gen_abi.py */\n")
        f.write(name_list("kConstantsOnlyInOpenPMIx", their_constants - our_constants))
        f.write(name_list("kConstantsOnlyInOurs", our_constants - their_constants))
        f.write(name_list("kMacrosOnlyInOpenPMIx", their_functions - our_functions))
        f.write(name_list("kMacrosOnlyInOurs", our_functions - their_functions))
        f.write(name_list("kTypesOnlyInOpenPMIx", their_types - our_types))
        f.write(name_list("kTypesOnlyInOurs", our_types - their_types))
        f.write(name_list("kStructsChecked", set(our_structs.keys()) - structs_only_ours))
        f.write(name_list("kMembersOnlyInOurs", members_only_ours))

    # Signatures: OpenPMIx's declarations rebuilt as reference types, checked
    # against ours with GCC's type compatibility test.
    their_fptrs, our_fptrs = function_pointer_typedefs(theirs), function_pointer_typedefs(ours)
    their_funcs, our_funcs = functions(theirs), functions(ours)
    lines = ["/* generated by tests/api/gen_abi.py */",
             "#include <pmix_server.h>", "#include <pmix_tool.h>", ""]
    count = 0
    for name in sorted(our_fptrs):
        if name not in their_fptrs:
            continue
        ret, params = their_fptrs[name]
        lines.append("typedef %s (*abi_ref_%s)(%s);" % (ret, name, params))
        lines.append("_Static_assert(__builtin_types_compatible_p(abi_ref_%s, %s), \"callback type %s\");"
                     % (name, name, name))
        count += 1
    missing_functions = []
    for name in sorted(our_funcs):
        if name not in their_funcs:
            missing_functions.append(name)
            continue
        ret, params = their_funcs[name]
        lines.append("typedef %s (*abi_ref_%s)(%s);" % (ret, name, params))
        lines.append("_Static_assert(__builtin_types_compatible_p(abi_ref_%s, __typeof__(&%s)), \"function %s\");"
                     % (name, name, name))
        count += 1
    lines.append("const int abi_signatures_checked = %d;" % count)
    lines.append("const char *const abi_functions_only_in_ours[] = {%s0};"
                 % "".join(c_string(n) + ", " for n in missing_functions))
    lines.append("const char *const abi_functions_only_in_openpmix[] = {%s0};"
                 % "".join(c_string(n) + ", " for n in sorted(set(their_funcs) - set(our_funcs))))
    with open(args.signatures, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
