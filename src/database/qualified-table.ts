/** `"schema"."table"`, or `"table"` when the schema is left to the connection. Names are checked identifiers. */
export function qualifiedTable(schema: string | null, table: string): string {
  return schema === null ? `"${table}"` : `"${schema}"."${table}"`;
}
