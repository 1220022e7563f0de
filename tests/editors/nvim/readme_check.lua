-- Checks the README's Neovim set-up (init.lua, loaded with -u): a python buffer gets a torchwise
-- client and its diagnostics, and the server complains about nothing (no window/showMessage;
-- test_nvim.py records those from --cmd, before the client starts). Writes $TORCHWISE_E2E_OUT.
local report = {}
local ok, err = pcall(function()
  local function torchwise_client()
    local get = vim.lsp.get_clients or vim.lsp.get_active_clients
    return get({ name = "torchwise", bufnr = 0 })[1]
  end
  assert(vim.wait(30000, function() return torchwise_client() ~= nil end, 20), "no torchwise client attached")
  assert(vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 20), "no diagnostics")
  for _, d in ipairs(vim.diagnostic.get(0)) do
    report[#report + 1] = { source = d.source, code = d.code, lnum = d.lnum, col = d.col }
  end
  -- `:TorchwiseBenchmark` exists (it is only run by e2e.lua, once the server offers it).
  assert(vim.fn.exists(":TorchwiseBenchmark") == 2, "no :TorchwiseBenchmark command")
end)
local file = assert(io.open(os.getenv("TORCHWISE_E2E_OUT"), "w"))
file:write(vim.json.encode({
  diagnostics = report, messages = _G.torchwise_messages or {}, error = (not ok) and tostring(err) or nil,
}))
file:close()
vim.cmd(ok and "qall!" or "cquit! 1")
