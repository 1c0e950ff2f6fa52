/**
 * The one row mapping of the repositories: a row's snake_case columns become the domain's
 * camelCase fields, values unchanged. Conversions a column needs (bigint ids, derived fields)
 * are written beside the call, so a mapper states only what is not a rename.
 */
type CamelCase<Column extends string> = Column extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : Column;

/** The type `mapRow` returns: the row's columns renamed, so a field a domain type lacks fails to compile. */
export type MappedRow<Row> = { [Column in keyof Row & string as CamelCase<Column>]: Row[Column] };

const camelCase = (column: string): string => column.replace(/_([a-z0-9])/g, (_, next: string) => next.toUpperCase());

export function mapRow<Row extends object>(row: Row): MappedRow<Row> {
  return Object.fromEntries(Object.entries(row).map(([column, value]) => [camelCase(column), value])) as MappedRow<Row>;
}
