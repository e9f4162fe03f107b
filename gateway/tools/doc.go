// Package tools owns the partner tool registry: PUT/GET/DELETE
// /v1/tools/{name} (scope tools:write), and the check of every proposed
// action's input against its tool's JSON Schema before the person sees it.
//
// Invariants:
//   - A tool's input_schema compiles (JSON Schema 2020-12 by default, or the
//     draft its $schema names) with santhosh-tekuri/jsonschema and is an
//     object schema (the OpenAI tools format needs one). References resolve
//     only inside the schema: no file or network is ever read.
//   - A partner has at most Config.MaxPerPartner tools (the Partner API's 25);
//     another partner's tools are invisible (404), never merely forbidden.
//   - Errors name the JSON path of the fault: input_schema/... for a bad
//     schema, input/... for a bad proposal.
package tools
