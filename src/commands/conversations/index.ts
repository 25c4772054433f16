/** The conversations group: list and get from the catalogue, the content thread, and update. */
import type { Command } from 'commander';
import { resourceByName } from '../../api/catalogue/index.js';
import type { Action } from '../../cli/action.js';
import { addGetVerb, addListVerb } from '../resources.js';
import { addContentVerb } from './content.js';
import { addUpdateVerb } from './update.js';

export function addConversationsGroup(program: Command, action: Action): void {
  const spec = resourceByName('conversations');
  const group = program.command(spec.name).description('read conversations and their content; park or close them');
  addListVerb(group, spec, action);
  addGetVerb(group, spec, action);
  addContentVerb(group, action);
  addUpdateVerb(group, action);
}
