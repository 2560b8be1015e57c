import { withoutSourcesContent } from '../../workers/workflow-bundle';

const PREFIX = '//# sourceMappingURL=data:application/json;charset=utf-8;base64,';
const inline = (map: object) => PREFIX + Buffer.from(JSON.stringify(map)).toString('base64');
const mapOf = (code: string) => JSON.parse(Buffer.from(code.slice(code.lastIndexOf(PREFIX) + PREFIX.length), 'base64').toString('utf8')) as Record<string, unknown>;

describe('withoutSourcesContent', () => {
  test('drops the sources\' text and keeps the code and every mapping', () => {
    const map = { version: 3, sources: ['a.js', 'b.js'], names: ['f'], mappings: 'AAAA;AACA', sourcesContent: ['const a = 1;', 'const b = 2;'] };
    const code = `var x = 1;\n${inline(map)}`;
    const slim = withoutSourcesContent(code);
    expect(slim.startsWith('var x = 1;\n')).toBe(true);
    expect(mapOf(slim)).toEqual({ version: 3, sources: ['a.js', 'b.js'], names: ['f'], mappings: 'AAAA;AACA' });
  });

  test('a bundle without an inline map is left alone', () => {
    expect(withoutSourcesContent('var x = 1;\n')).toBe('var x = 1;\n');
  });
});
