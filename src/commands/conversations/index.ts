/** The conversations group: list and get from the catalogue, the content thread, and update. */
import { resourceByName } from '../../catalogue/index.js';
import { addGetVerb, addListVerb, type OwnGroup } from '../resources.js';
import { addContentVerb } from './content.js';
import { addUpdateVerb } from './update.js';

export const conversationsGroup: OwnGroup = {
  description: 'read conversations and their content; park or close them',
  addVerbs(group, action) {
    const spec = resourceByName('conversations');
    addListVerb(group, spec, action);
    addGetVerb(group, spec, action);
    addContentVerb(group, action);
    addUpdateVerb(group, action);
  },
};
