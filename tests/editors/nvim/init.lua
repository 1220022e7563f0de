-- torchwise in Neovim 0.8+ (init.lua). `torchwise` must be on PATH; otherwise use
-- cmd = { "/path/to/venv/bin/python", "-m", "torchwise", "lsp" }.
vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    local marker = vim.fs.find({ "pyproject.toml", "setup.py", ".git" },
      { upward = true, path = vim.fs.dirname(vim.api.nvim_buf_get_name(args.buf)) })[1]
    vim.lsp.start({
      name = "torchwise",
      cmd = { "torchwise", "lsp" },
      root_dir = marker and vim.fs.dirname(marker) or vim.fn.getcwd(),
      -- The VS Code settings without their `torchwise.` prefix, e.g. ignore = { "TW105" }.
      -- trusted = true: you vouch for this workspace, so the benchmark may run its code.
      settings = { torchwise = { trusted = true, benchmark = { device = "auto" } } },
    })
  end,
})

-- :TorchwiseBenchmark times the loop under the cursor against its vectorized rewrite.
vim.api.nvim_create_user_command("TorchwiseBenchmark", function()
  local params = {
    command = "torchwise.benchmarkLoop",
    arguments = { vim.uri_from_bufnr(0), vim.api.nvim_win_get_cursor(0)[1] - 1 },
  }
  vim.lsp.buf_request(0, "workspace/executeCommand", params, function(err, result)
    -- result.message is the whole result: loop and vectorized medians ± IQR, the speedup (or
    -- "within noise"), the device, whether the results match, peak memory and the scaling points.
    vim.notify(err and ("torchwise: " .. err.message) or ("torchwise: " .. result.message))
  end)
end, {})
