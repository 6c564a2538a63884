// Validation beyond graphql-js 16's specifiedRules, and clearer words for its one opaque refusal.
import { GraphQLError, specifiedRules, type ASTVisitor, type ValidationContext, type ValidationRule } from "graphql";

/**
 * Operation Type Existence (GraphQL spec, September 2025, §5.2.1.1; graphql-js 17's KnownOperationTypesRule): a
 * mutation or subscription against a schema without that root type is invalid. graphql-js 16 lets it through
 * validation and fails it at execution with `data: null`, which reads as a request that ran.
 */
export function operationTypeExistsRule(context: ValidationContext): ASTVisitor {
  const schema = context.getSchema();
  return {
    OperationDefinition(node) {
      if (schema.getRootType(node.operation)) return;
      context.reportError(new GraphQLError(`The schema has no ${node.operation} operations`, { nodes: node }));
    },
  };
}

export const VALIDATION_RULES: readonly ValidationRule[] = [...specifiedRules, operationTypeExistsRule];

/**
 * graphql-js gives up on a document whose repeated selections would take too long to compare
 * (OverlappingFieldsCanBeMergedRule's complexity budget) with the bare message "Validation aborted.".
 */
export function clarifyValidationError(error: GraphQLError): GraphQLError {
  if (error.message !== "Validation aborted.") return error;
  return new GraphQLError("The document repeats too many field selections to validate; select each field once");
}
