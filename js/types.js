// The widget's state, as JSDoc types: exactly what nbagent/views/state.py builds (`memory_to_state`,
// `RunStateBuilder`, `action_step_to_dict`, `planning_step_to_dict`, `answer_to_dict`) and what
// nbagent/notebook/driver.py's `RunDriver.snapshot()` sends as `controls`. Types only, nothing at run
// time. tests/views/test_state_schema.py compares every `@property` name below with the keys of the
// dicts Python produces, so a key added on one side only fails the tests; keep one `@typedef` per
// JSDoc block, and name nested object types with their own typedef (the test reads them by name).

/** @typedef {import("./status.js").RunStatus} RunStatus */

/**
 * Input and output tokens of a step or a run.
 * @typedef {object} TokenUsage
 * @property {number} input_tokens
 * @property {number} output_tokens
 */

/**
 * A final answer (`answer_to_dict`): the value's text, its Python type name ("str" for any text, shown
 * as markdown; anything else preformatted) and, when the value is an image, its index in `images`.
 * @typedef {object} Answer
 * @property {string} text
 * @property {string} type
 * @property {number[]} images
 * @property {string | null} [outcome] a RunOutcome (status.js); anything but "success": not an answer
 */

/**
 * A tool call of a ToolCallingAgent step (not the CodeAgent's own python_interpreter call), or a tool the code of
 * a CodeAgent step called (nbagent/loop/tool_uses.py).
 * @typedef {object} ToolCall
 * @property {string} name
 * @property {unknown} arguments JSON data (anything else arrives as its str())
 * @property {string} [result] a call of the step's code: what the tool gave, short
 * @property {string} [error] a call of the step's code: the error it raised
 * @property {number} [seconds] a call of the step's code: how long it took
 * @property {number} [more] calls after this one not listed (a step lists 50)
 */

/**
 * The task a run was given, with its images.
 * @typedef {object} TaskStep
 * @property {"task"} kind
 * @property {null} step_number
 * @property {string} task markdown
 * @property {number[]} images indexes into the widget's `images`
 * @property {TaskPart[]} [parts] the task cut where a DataFrame's first rows show as a table (empty: the task is
 *   Markdown, whole; absent in older saved widgets)
 */

/**
 * A part of a task (nbagent/views/task_preview.py): Markdown, a DataFrame's first rows as a table, or (when they
 * could not be read back surely) their aligned text.
 * @typedef {object} TaskPart
 * @property {"markdown" | "table" | "text"} kind
 * @property {string | null} text markdown, or the aligned text (kind "text")
 * @property {PreviewTable | null} table kind "table"
 */

/**
 * The first rows of a DataFrame, as the task describes them.
 * @typedef {object} PreviewTable
 * @property {string | null} index_name
 * @property {string[]} columns
 * @property {string[]} index one label per row
 * @property {string[][]} rows the cells, as pandas printed them
 * @property {boolean} more_columns the frame has more columns than the preview shows
 */

/**
 * The fields of an action or a planning step (`_base_step`, `action_step_to_dict`, `planning_step_to_dict`).
 * @typedef {object} StepFields
 * @property {"action" | "planning"} kind
 * @property {number | null} step_number null while a step whose number is not known yet streams
 * @property {string | null} model_output markdown: the model's text, thought included
 * @property {string | null} code the code that ran
 * @property {string | null} model_code what the model wrote, only when it differs from what ran
 * @property {CodeChange[]} [code_changes] who changed the model's code before it ran (absent in older saved widgets)
 * @property {ToolCall[]} tool_calls
 * @property {string | null} observations execution logs / tool results
 * @property {string[]} [warnings] warnings raised while the code ran, kept out of the observations (absent in older
 *   saved widgets)
 * @property {Permission[]} [permissions] what the sandbox refused the code and what became of it (absent in older
 *   saved widgets)
 * @property {string | null} error
 * @property {number[]} images indexes into the widget's `images`
 * @property {string | null} action_output str() of the value the step returned
 * @property {boolean} is_final_answer
 * @property {TokenUsage | null} token_usage
 * @property {number | null} duration seconds; null while the step runs
 * @property {boolean} stopped
 * @property {string | null} [mark] how it ended when not plainly: "error" | "stopped" | "timed_out" | "stuck" |
 *   "rejected" (nbagent/record/status.py's StepMark; absent in older saved widgets)
 * @property {string | null} plan planning steps
 * @property {Run[]} children runs of managed agents called in this step
 * @property {NamespaceChange[]} changes what the step's code did to the namespace (empty: nothing, or no code)
 */

/**
 * A change of the step's code before it ran (nbagent/views/code_diff.py): nbagent's rewrite of the model's code, a
 * person's edit at approval, or (a run saved before steps said who) a change of unknown origin.
 * @typedef {object} CodeChange
 * @property {"nbagent" | "you" | "unknown"} by
 * @property {string} label "rewritten by nbagent", "edited by you", "changed before it ran"
 * @property {Array<[" " | "-" | "+", string]> | null} diff every line, marked kept, removed or added (null: not known)
 */

/**
 * One name the step's code created, rebound, changed in place or deleted (nbagent/sandbox/changes.py).
 * @typedef {object} NamespaceChange
 * @property {string} name
 * @property {"created" | "rebound" | "modified" | "deleted"} change
 * @property {string} type what the name holds now, e.g. "DataFrame 50×6" (empty when deleted)
 * @property {string} detail what changed in place, e.g. "+1 column total_revenue" (empty: not visible)
 * @property {boolean} [kept] the change stayed in the agent's copy (copy_inputs): the notebook's object is untouched
 * @property {string} [reason] why the isolated worker kept it (a name shadowing a builtin, IPython's or a module of
 *   yours; a file mapping not granted): the notebook never got it
 * @property {boolean} [yours] the name was the person's (not the agent's): shown as a warning, undone by "Undo this run"
 */

/**
 * A refused file, host or network use the step asked about, and the answer (nbagent/views/permissions.py).
 * @typedef {object} Permission
 * @property {"read" | "write" | "connect" | "network" | "variable"} kind
 * @property {string} target a path, "host:port", or "" (network)
 * @property {"once" | "run" | "deny" | "never"} answer never: the sandbox never grants it, nobody was asked
 * @property {AskPart[]} [parts] the line as parts, what is rendered (absent in older states)
 * @property {string} text the line as plain text, e.g. "Allowed once: write `/work/out.csv` (by you)"
 */

/**
 * A part of an ask's sentence: nbagent's words, the target (a path, "host:port", a name: escaped, shown as one text
 * node) or a detail nbagent did not write (a reason, an error; escaped). nbagent/sandbox/wire/capabilities.py.
 * @typedef {["words" | "target" | "detail", string]} AskPart
 */

/** @typedef {StepFields & {kind: "action"}} ActionStep a step where the model wrote code or called tools */

/** @typedef {StepFields & {kind: "planning"}} PlanningStep a step where the model wrote a plan */

/**
 * The final answer, as the last step of a run.
 * @typedef {object} FinalStep
 * @property {"final"} kind
 * @property {null} step_number
 * @property {Answer} final_answer
 */

/** @typedef {TaskStep | ActionStep | PlanningStep | FinalStep} Step one step of a run, by `kind` */

/**
 * A run: the widget's `run` trait, and each of a step's `children`.
 * @typedef {object} Run
 * @property {string} task the latest task of the run
 * @property {string | null} agent_name
 * @property {string | null} model_id
 * @property {RunStatus} status
 * @property {Step[]} steps in order
 * @property {Answer | null} final_answer the last final answer
 * @property {TokenUsage | null} token_usage
 * @property {number | null} duration seconds
 * @property {string | null} error what ended the run with status "error"
 * @property {string | null} [outcome] how the run ended: a RunOutcome (status.js), null while it runs
 * @property {string | null} [message] a passing note, e.g. "loading the offline model…"
 * @property {number | null} [max_time] the run's time limit in seconds (max_time), null: no limit
 * @property {number | null} [started_at] when the run (or its re-run) started, Unix time in seconds of the kernel's
 *   clock; null for a run rebuilt from memory (absent in older saved widgets)
 * @property {number | null} [step_started_at] when the running step started (Unix time in seconds), null between
 *   steps (js/clock.js counts from these two)
 * @property {string[]} [scratch] the names its code made that stay in the agent's scope (agent.scratch), not the
 *   notebook's (nbagent/loop/scope.py)
 * @property {Program | null} [program] the run as code, set when it ended (absent in older saved widgets)
 */

/**
 * The run as code (agent.to_code(), nbagent/loop/program: `RunProgram.state()`).
 * @typedef {object} Program
 * @property {string} text the program with its first comment line ("# checked: …", "# unchecked: …"): what
 *   "Copy as cell" inserts
 * @property {boolean | null} checked run once without the model, it gave the run's answer; null: no program
 * @property {string} reason "reproduces the answer", or why it is not checked, or why there is no program
 * @property {string[]} inputs the notebook variables it reads
 * @property {string[]} tools the tools it calls
 */

/**
 * Which of the controls can act now.
 * @typedef {object} ControlsCan
 * @property {boolean} run
 * @property {boolean} step
 * @property {boolean} pause
 * @property {boolean} stop
 * @property {boolean} approve
 * @property {boolean} reject
 * @property {boolean} rerun
 * @property {boolean} permission a permission ask awaits an answer
 * @property {boolean} undo the finished run's changes to the namespace can be undone ("Undo this run")
 */

/**
 * The `controls` trait while a driver is attached: `RunDriver.snapshot()` (nbagent/notebook/driver.py),
 * which extends `RunGates.snapshot()` (nbagent/loop/gates.py).
 * @typedef {object} ControlsSnapshot
 * @property {RunStatus} status
 * @property {"run" | "pause" | "step"} mode run freely, pause at the next step, or run a budget of steps
 * @property {boolean} approve_code every step's code waits for approval
 * @property {string | null} pending_code the code awaiting approval
 * @property {number | null} pending_step the step whose code awaits approval
 * @property {PendingAsk | null} pending_ask the permission asked for (status "awaiting_permission")
 * @property {boolean} stopping a stop was requested and the run has not ended yet
 * @property {boolean} active a run (blocking or prepared) is under way, paused ones included
 * @property {string} message the last notice or error, for the person
 * @property {number} forks earlier runs kept by re-runs
 * @property {boolean} undone the finished run's changes were undone ("Undo this run"): its change warning is gone
 * @property {number[]} rerunnable step numbers a re-run can start from
 * @property {ControlsCan} can
 */

/**
 * A permission the run asks a person for (`RunGates.ask_permission`, nbagent/loop/gates.py).
 * @typedef {object} PendingAsk
 * @property {number | null} step the step whose code was refused
 * @property {"read" | "write" | "connect" | "network" | "variable"} kind
 * @property {string} target a path, "host:port", or "" (network)
 * @property {AskPart[]} [parts] the question as parts, what the panel renders (absent in older states)
 * @property {string} text the question as plain text, e.g. "Step 3 wants to write `out/report.csv`"
 */

/**
 * The `controls` trait: a snapshot, or `{}` when no driver is attached (a saved or reloaded run).
 * @typedef {ControlsSnapshot | Partial<Record<keyof ControlsSnapshot, undefined>>} ControlsState
 */

/**
 * A command of the controls (nbagent/notebook/driver.py `ACTIONS`).
 * @typedef {"run" | "step" | "pause" | "stop" | "approve" | "reject" | "rerun" | "restore_fork" | "approve_mode" | "permission" | "undo"} ControlAction
 */

/**
 * An answer to a permission ask: allow once (the step's re-run), allow for this run, deny.
 * @typedef {"once" | "run" | "deny"} PermissionAnswer
 */

/**
 * What a button sends (as `{type: "control", ...command}`): the action and what it needs.
 * @typedef {object} ControlCommand
 * @property {ControlAction} action
 * @property {string} [code] the (edited) code, while code awaits approval
 * @property {string} [note] Reject's note for the model
 * @property {number} [step] the step to re-run from
 * @property {number} [index] the earlier run (agent.forks) to make live again
 * @property {boolean} [on] approve_mode on or off
 * @property {PermissionAnswer} [answer] the answer to a permission ask
 */

/**
 * The model of the widget (nbagent/notebook/widget.py `AgentWidget`'s synced traits), as the front-end
 * sees it: PNG bytes arrive as DataViews and the channel widget as an "IPY_MODEL_<id>" reference.
 * @typedef {object} WidgetModel
 * @property {Run} run
 * @property {DataView[]} images PNG bytes; steps refer to them by index
 * @property {ControlsState} controls
 * @property {string | null} control_channel the ControlChannel comm the buttons send on
 * @property {import("./forks.js").ForkSummary[]} forks earlier runs kept by re-runs (agent.forks), oldest first
 * @property {string} [views_key] the same in every view of this widget (each view gets its own model proxy)
 */

/**
 * "A step began" (Python -> JS, transient).
 * @typedef {object} StepStartMessage
 * @property {"step_start"} type
 * @property {number | null} step_number
 * @property {"action" | "planning"} kind
 */

/**
 * Model text while it streams (Python -> JS, transient).
 * @typedef {object} DeltaMessage
 * @property {"delta"} type
 * @property {number | null} step_number
 * @property {string} text
 */

/**
 * New images, as the message's buffers, at positions start, start+1, … (Python -> JS).
 * @typedef {object} ImagesMessage
 * @property {"images"} type
 * @property {number} start
 */

/**
 * What the step's code printed, as it prints it.
 * @typedef {object} LogsMessage
 * @property {"logs"} type
 * @property {number | null} step_number
 * @property {string} text
 */

/** @typedef {StepStartMessage | DeltaMessage | LogsMessage | ImagesMessage} WidgetMessage a custom message from Python */

/**
 * "Send the images from position `have` on" (JS -> Python), when a step refers to an image not received.
 * @typedef {object} RequestImagesMessage
 * @property {"request_images"} type
 * @property {number} have
 */

export {};
