"""Layer 7, compat: what smolagents users import that has no other home here.

Modules:
    legacy                     ManagedAgent (deprecated in smolagents 1.8) and from_hub
    paths                      smolagents' module paths (`nbagent.memory`, `nbagent.utils`, …) as aliases
    local_python_executor      `nbagent.local_python_executor`: evaluate_python_code on the sandbox, its names
    utils                      `nbagent.utils`: parse_code_blobs, parse_json_blob, get_source, the AgentError family
    memory                     `nbagent.memory`: the record's steps, CallbackRegistry, ChatMessage, MessageRole
    default_tools              `nbagent.default_tools`: the default tools and BASE_PYTHON_TOOLS
    tool_validation            `nbagent.tool_validation`: validate_tool_attributes
    function_type_hints_utils  `nbagent._function_type_hints_utils`: get_json_schema, get_imports

Importing this package imports none of them: the package root loads `paths` at
`import nbagent`, and the others load when their alias or names are first used.
"""
