import type { AgentMiddleware, ModelCallState } from '../engine/agent-middleware.js';
import type { SkillCatalog } from './skill-catalog.js';
import { READ_SKILL_TOOL, RUN_SKILL_TOOL } from './skill-tools.js';

/**
 * Tells the model which skills exist, so it can ask for one: appends a short section with each
 * skill's name and description to the system message. The instructions themselves stay out
 * of the prompt until the model asks for them with `read_skill`, so many skills cost little.
 * Register the tools from `createSkillTools` alongside it.
 */
export class SkillsMiddleware implements AgentMiddleware {
  readonly name = 'skills';

  /** @param allowed Which skills the model is told of (a tenant's feature switches); default all. */
  constructor(
    private readonly catalog: SkillCatalog,
    private readonly allowed: (name: string) => boolean = () => true,
  ) {}

  /** The same middleware telling only of the skills `allowed` accepts. */
  only(allowed: (name: string) => boolean): SkillsMiddleware {
    return new SkillsMiddleware(this.catalog, (name) => this.allowed(name) && allowed(name));
  }

  beforeModel(state: ModelCallState): void {
    const section = this.section();
    if (!section) return;
    const first = state.messages[0];
    // The message objects are shared with the run's history: replace, never mutate.
    if (first?.role === 'system') state.messages[0] = { ...first, content: first.content ? `${first.content}\n\n${section}` : section };
    else state.messages.unshift({ role: 'system', content: section });
  }

  /** The prompt section, or an empty string when there are no skills. */
  section(): string {
    const skills = this.catalog.list().filter((s) => this.allowed(s.name));
    if (skills.length === 0) return '';
    return [
      '## Skills',
      'Skills are packaged instructions and scripts for specific tasks. When a task matches a skill, first call ' +
        `\`${READ_SKILL_TOOL}\` with its name and follow the instructions it returns; run its scripts with ` +
        `\`${RUN_SKILL_TOOL}\` (name, script, args). Scripts run in the user's workspace root.`,
      ...skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, ' ')}`),
    ].join('\n');
  }
}
