"""Runs schemathesis with the existing server's OpenAPI document against a running OpenInstant.

Only the operations OpenInstant serves are tested: those whose method and path (parameter names
aside) docs/openapi.yaml also describes, except the deletions of whole documents and layers, which
would delete the records the path parameters are pinned to (the caller creates them, so that most
requests reach real data; our route tests cover those deletions). Prints one JSON object: the operations tested, and each
failure as {"check": code, "title": title, "operation": "METHOD /path"}.

Twenty cases per operation, generated deterministically from a fixed seed, so every run sends the
same requests; SECONDS bounds the whole run.

Usage: python3 schemathesis_run.py REFERENCE.yml OUR-OPENAPI.yml BASE-URL API-TOKEN WORK-DIR SECONDS
"""

import json
import os
import re
import subprocess
import sys

import yaml

METHODS = ("get", "post", "put", "patch", "delete")
DESTRUCTIVE = {"delete-document", "bulk-delete-documents", "delete-layer"}


def operations(path):
    with open(path, encoding="utf-8") as file:
        document = yaml.safe_load(file)
    for route, items in document["paths"].items():
        for method, operation in items.items():
            if method in METHODS:
                yield method, re.sub(r"\{[^}]+\}", "{}", route), operation


def main():
    reference, ours, base_url, token, work, seconds = sys.argv[1:7]
    served = {(method, route) for method, route, _ in operations(ours)}
    selected = [
        op["operationId"]
        for method, route, op in operations(reference)
        if (method, route) in served and op["operationId"] not in DESTRUCTIVE
    ]
    config = os.path.join(work, "schemathesis.toml")
    with open(config, "w", encoding="utf-8") as file:
        file.write(
            "[parameters]\n"
            '"path.documentId" = "doc"\n'
            '"path.layerName" = "review"\n'
            '"path.annotationId" = "a1"\n'
            '"path.bookmarkId" = "b1"\n'
            '"path.formFieldId" = "f1"\n'
            '"path.formFieldWidgetId" = "w1"\n'
            '"path.pageIndex" = 0\n'
        )
    report = os.path.join(work, "report.json")
    command = ["schemathesis", "--config-file", config, "run", reference, "--url", base_url]
    command += ["-H", f'Authorization: Token token="{token}"']
    for operation_id in selected:
        command += ["--include-operation-id", operation_id]
    command += [
        "--checks", "not_a_server_error,status_code_conformance,response_schema_conformance",
        "--phases", "examples,coverage,fuzzing",
        "--max-examples", "20", "--generation-deterministic",
        "--workers", "1",
        "--seed", "20261124",
        "--report", "json", "--report-json-path", report,
        "--no-color",
    ]
    try:
        run = subprocess.run(command, capture_output=True, text=True, check=False, cwd=work, timeout=float(seconds))
    except subprocess.TimeoutExpired as timeout:
        output = (timeout.stdout or b"")[-4000:]
        sys.stderr.write(f"schemathesis did not finish within {seconds} seconds.\n")
        sys.stderr.write(output.decode("utf-8", "replace") if isinstance(output, bytes) else output)
        sys.exit(3)
    if not os.path.exists(report):
        sys.stderr.write(run.stdout[-4000:] + run.stderr[-4000:])
        sys.exit(2)
    with open(report, encoding="utf-8") as file:
        result = json.load(file)
    failures = [
        {"check": failure["code"], "title": failure["title"], "operation": operation}
        for failure in result.get("failures", [])
        for operation in failure.get("operations", [])
    ]
    errors = [error.get("title", "") for error in result.get("errors", [])]
    print(json.dumps({"selected": len(selected), "failures": failures, "errors": errors, "output": run.stdout[-20000:]}))


if __name__ == "__main__":
    main()
