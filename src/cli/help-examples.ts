import type { Command } from 'commander';

/** Examples a command gives of itself, printed under its help instead of the generated one. */
const givenExamples = new WeakMap<Command, string[]>();

/** Gives `command` its own examples (each a full command line); its help prints these and no other. */
export function setExamples(command: Command, examples: string[]): Command {
  givenExamples.set(command, examples);
  return command;
}

/**
 * `skillsmith skills sync --dir <dir> --tenant acme --json`: how a command is called — its
 * arguments and required options, then the global ones — for a command that gives no example.
 */
function generatedExample(command: Command): string {
  const path: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) path.unshift(current.name());
  const args = command.registeredArguments.map((argument) => (argument.required ? `<${argument.name()}>` : `[${argument.name()}]`));
  const requiredOptions = command.options.filter((option) => option.mandatory).map((option) => option.flags.replace(/^-\w, /, ''));
  return ['skillsmith', ...path, ...args, ...requiredOptions, '--tenant', 'acme', '--json'].join(' ');
}

/** The example block under a leaf command's help: its own examples, else the generated one. */
export function examplesHelp(command: Command): string {
  const examples = givenExamples.get(command) ?? [generatedExample(command)];
  return `\n${examples.length > 1 ? 'Examples' : 'Example'}:\n${examples.map((example) => `  ${example}\n`).join('')}`;
}
