import { McpIntentRecognizer } from './mcp-intent.js';

const recognizer = new McpIntentRecognizer([
  { name: 'weather', triggerKeywords: ['天气', '气温', '下雨', 'forecast'], tools: ['get_current', 'get_forecast'] },
  { name: 'github', triggerKeywords: ['pull request', 'issue'], tools: ['search_issues', 'create_issue'] },
  { name: 'jira', tools: ['get_ticket'] },
]);

describe('McpIntentRecognizer', () => {
  it("recognizes explicit call patterns, Chinese and English, when they name a server or a tool", () => {
    expect(recognizer.recognize('用 weather 工具查一下北京')).toEqual({ rule: 'explicit', tools: ['weather.get_current', 'weather.get_forecast'] });
    expect(recognizer.recognize('调用 get_forecast 看看上海')).toEqual({ rule: 'explicit', tools: ['weather.get_forecast'] });
    expect(recognizer.recognize('使用jira服务看看 PROJ-12')).toEqual({ rule: 'explicit', tools: ['jira.get_ticket'] });
    expect(recognizer.recognize('帮我 get ticket 一下 PROJ-9')).toEqual({ rule: 'explicit', tools: ['jira.get_ticket'] });
    expect(recognizer.recognize('Please use the jira tool for PROJ-1')).toEqual({ rule: 'explicit', tools: ['jira.get_ticket'] });
    expect(recognizer.recognize('call search_issues for "flaky test"')).toEqual({ rule: 'explicit', tools: ['github.search_issues'] });
  });

  it('takes a written-out server.tool or its wire name as a call', () => {
    expect(recognizer.recognize('run github.create_issue please')).toEqual({ rule: 'mention', tools: ['github.create_issue'] });
    expect(recognizer.recognize('jira__get_ticket PROJ-3')).toEqual({ rule: 'mention', tools: ['jira.get_ticket'] });
  });

  it("matches a server's trigger keywords, the tools the message names first", () => {
    expect(recognizer.recognize('明天北京会下雨吗？')).toEqual({ rule: 'keyword', tools: ['weather.get_current', 'weather.get_forecast'] });
    expect(recognizer.recognize("What's the forecast for Oslo? get forecast please")).toEqual({ rule: 'keyword', tools: ['weather.get_forecast', 'weather.get_current'] });
    expect(recognizer.recognize('Any open Pull-Request about the parser?').tools).toEqual(['github.search_issues', 'github.create_issue']);
  });

  it('finds no intent in ordinary messages, explicit-sounding ones that name nothing, or words inside other words', () => {
    for (const message of ['hello, how are you?', 'the issuer of this bond', 'weatherproof jackets']) {
      expect(recognizer.recognize(message)).toEqual({ rule: 'none', tools: [] });
    }
    // Call-like wording that names nothing is left for Layer 2.
    for (const message of ['帮我看一下这段代码', 'call me later', '用这个工具箱整理房间']) {
      expect(recognizer.recognize(message)).toEqual({ rule: 'none', tools: [], unsure: true });
    }
  });

  it('reaches a server without trigger keywords only by an explicit call', () => {
    expect(recognizer.recognize('what does jira say about PROJ-1?')).toEqual({ rule: 'none', tools: [] });
  });
});
