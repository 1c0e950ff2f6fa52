import { describe, expect, it } from 'vitest';
import { groupByShape, shapesDiffer, type ShapedStep } from '../../src/clustering/call-shapes.ts';

const shape = (...names: string[][]): ShapedStep[] => names.map((argumentNames, index) => ({ tool: `t${index}`, argumentNames }));

describe('call shapes (call-shapes)', () => {
  it('differ where a step is given arguments of other names, not where one only adds names', () => {
    expect(shapesDiffer(shape(['region'], ['id']), shape(['period'], ['id']))).toBe(true);
    expect(shapesDiffer(shape(['region'], ['id']), shape(['note', 'region'], ['id']))).toBe(false);
    expect(shapesDiffer(shape(['a', 'b']), shape(['b', 'a']))).toBe(false);
    // other tools are other steps, not another shape
    expect(shapesDiffer(shape(['a']), [{ tool: 'other', argumentNames: ['b'] }])).toBe(false);
    expect(shapesDiffer(shape(['a']), shape(['a'], ['b']))).toBe(false);
  });

  it('groups items by shape, largest first, an optional argument joining the shape it adds to', () => {
    const shapes: Record<string, ShapedStep[]> = {
      a1: shape(['region']),
      a2: shape(['region']),
      a3: shape(['note', 'region']),
      b1: shape(['period']),
      b2: shape(['period']),
      b3: shape(['period']),
    };
    expect(groupByShape(Object.keys(shapes), (item) => shapes[item]!)).toEqual([
      ['b1', 'b2', 'b3'],
      ['a1', 'a2', 'a3'],
    ]);
  });
});
