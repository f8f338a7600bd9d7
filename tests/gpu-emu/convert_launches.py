#!/usr/bin/env python3
"""Rewrites every kernel<<<grid, block, shared, stream>>>(args...); in the given .cu files as
GPU_LAUNCH(kernel, grid, block, shared, stream, args...); (gpu_device.h), taking a pointer first
when the kernel's template arguments contain a comma, and extern __shared__ T name[]; as
GPU_DYNAMIC_SHARED(T, name);. Run clang-format afterwards."""
import re, sys

def balanced_end(s, i, open_c, close_c):
    depth = 0
    while i < len(s):
        if s[i] == open_c: depth += 1
        elif s[i] == close_c:
            depth -= 1
            if depth == 0: return i
        i += 1
    raise ValueError('unbalanced')

def top_level_comma(expr):
    # the preprocessor splits macro arguments at commas outside parentheses (<> do not protect)
    depth = 0
    for c in expr:
        if c in '([': depth += 1
        elif c in ')]': depth -= 1
        elif c == ',' and depth == 0: return True
    return False

def convert(s):
    n = 0
    while True:
        at = s.find('<<<')
        if at < 0: return s, n
        # kernel expression: walk back over an optional balanced <...> and an identifier
        j = at
        if s[j - 1] == '>':
            depth = 0
            while True:
                j -= 1
                if s[j] == '>': depth += 1
                elif s[j] == '<':
                    depth -= 1
                    if depth == 0: break
        while j > 0 and (s[j - 1].isalnum() or s[j - 1] in '_:'): j -= 1
        kernel = s[j:at]
        close = s.index('>>>', at)
        config = s[at + 3:close]
        paren = close + 3
        while s[paren].isspace(): paren += 1
        assert s[paren] == '('
        end = balanced_end(s, paren, '(', ')')
        args = s[paren + 1:end].strip()
        semi = end + 1
        assert s[semi] == ';', s[j:semi + 10]
        indent = s[s.rfind('\n', 0, j) + 1:j]
        launch_args = config.strip() + (', ' + args if args else '')
        if top_level_comma(kernel):
            repl = ('{\n%s  auto* launched_kernel = &%s;\n%s  GPU_LAUNCH(launched_kernel, %s);\n%s}'
                    % (indent, kernel, indent, launch_args, indent))
        else:
            repl = 'GPU_LAUNCH(%s, %s);' % (kernel, launch_args)
        s = s[:j] + repl + s[semi + 1:]
        n += 1

for path in sys.argv[1:]:
    text = open(path).read()
    text, n = convert(text)
    text, m = re.subn(r'extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w:]+)\s+(\w+)\s*\[\s*\]\s*;',
                      r'GPU_DYNAMIC_SHARED(\1, \2);', text)
    open(path, 'w').write(text)
    print('%s: %d launches, %d dynamic shared' % (path, n, m))
